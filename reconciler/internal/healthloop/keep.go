package healthloop

import (
	"context"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// keeper keeps the health document: as last written (doc), and what was
// learnt since (obs), written together and only then told.
type keeper struct {
	o      *Options
	loaded bool
	doc    health.Doc
	obs    []health.Observation
	dirOf  map[string]string // the Director of each observed deployment
	dirty  bool
}

// load reads the document; false (logged) when Vault did not answer.
func (k *keeper) load(ctx context.Context) bool {
	var doc health.Doc
	if _, err := k.o.Store.ReadState(ctx, health.DocName, &doc); err != nil {
		if ctx.Err() == nil {
			k.o.Log.Warn("health not checked: the health document could not be read", "error", err)
		}
		return false
	}
	if doc.Unhealthy == nil {
		doc.Unhealthy = map[string]report.UnhealthyInstance{}
	}
	k.doc, k.loaded, k.dirOf = doc, true, map[string]string{}
	k.o.Tracker.Set(doc)
	k.count(len(doc.Unhealthy))
	return true
}

// forget drops the entries of the instances gone.
func (k *keeper) forget(gone []string) {
	if len(gone) == 0 {
		return
	}
	k.doc = k.doc.Forget(func(id string) bool { return !slices.Contains(gone, id) })
	k.dirty = true
}

// observe keeps what a check learnt until the next write.
func (k *keeper) observe(o health.Observation, director string) {
	k.obs = append(k.obs, o)
	k.dirOf[o.Deployment] = director
	k.dirty = true
}

// flush folds what was learnt into the document, writes it when it
// changed, and only then tells the transitions; a write that fails keeps
// what was learnt for the next.
func (k *keeper) flush(ctx context.Context, pending []string, now time.Time) {
	next, transitions := health.Apply(k.doc, k.obs, now.UTC())
	next.Pending = pending
	if !next.Equal(k.doc) {
		if err := k.o.Store.WriteState(ctx, health.DocName, next); err != nil {
			if ctx.Err() == nil {
				k.o.Log.Warn("the health document could not be written; what was learnt is written and told next time", "error", err)
			}
			return
		}
	}
	k.doc, k.obs, k.dirty = next, nil, false
	k.o.Tracker.Set(next)
	k.count(len(next.Unhealthy))
	for _, t := range transitions {
		k.announce(t)
	}
	clear(k.dirOf)
}

// announce logs a transition and tells the notifier.
func (k *keeper) announce(t health.Transition) {
	e := t.Entry
	typ, reason := notify.Recovered, "every VM running again"
	if t.Unhealthy {
		typ, reason = notify.Unhealthy, e.Reason()
		k.o.Log.Warn("instance unhealthy", "instance", e.InstanceID, "deployment", e.Deployment, "reason", reason)
	} else {
		k.o.Log.Info("instance recovered", "instance", e.InstanceID, "deployment", e.Deployment, "unhealthy_since", e.Since)
	}
	if k.o.Notifier != nil {
		k.o.Notifier.Notify(notify.Event{Type: typ, InstanceID: e.InstanceID, Deployment: e.Deployment,
			Director: k.dirOf[e.Deployment], Reason: reason, Time: e.CheckedAt})
	}
}

func (k *keeper) count(unhealthy int) {
	if k.o.Counters != nil {
		k.o.Counters.Unhealthy(unhealthy)
	}
}
