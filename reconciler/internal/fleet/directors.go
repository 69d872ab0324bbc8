package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
)

// ErrBadDirectors is returned by New for a list it cannot work with.
var ErrBadDirectors = errors.New("bad Directors")

// member is a configured Director with what is decided once about it.
type member struct {
	ports.NamedDirector
	recorded string // the name index records keep ("" when it is the only Director)
	system   string // its breaker's name in errors
	feedDoc  string // its feed mark's state document
	sole     bool   // the only Director: its errors are the run's as they are
}

// failed is err as the run reports it of this Director: "Director NAME
// what: err" when there are several, err itself when it is the only one.
func (m member) failed(what string, err error) error {
	switch {
	case m.sole:
		return err
	case what == "":
		//lint:ignore ST1005 the Director is a name (staticcheck let it pass while a type fleet.Director was in scope)
		return fmt.Errorf("Director %s: %w", m.Name, err)
	}
	//lint:ignore ST1005 the Director is a name, as above
	return fmt.Errorf("Director %s %s: %w", m.Name, what, err)
}

// Directors are the configured Directors, the first the default. They
// never change once made.
type Directors struct {
	members []member
}

// feedDoc is the state document of the event feed's mark of a single
// Director; each of several keeps feedDoc-{name}.
const feedDoc = "events"

// New checks the list (at least one, each with a Director and a name of its
// own) and decides each one's labels: a single Director's records name no
// Director, its breaker is "director" and its mark "events"; each of
// several is named in all three.
func New(list []ports.NamedDirector) (*Directors, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("%w: a Director is required", ErrBadDirectors)
	}
	sole := len(list) == 1
	seen := map[string]bool{}
	d := &Directors{}
	for _, n := range list {
		if n.Director == nil || n.Name == "" || seen[n.Name] {
			return nil, fmt.Errorf("%w: every Director needs a Director and a name of its own (%q)", ErrBadDirectors, n.Name)
		}
		seen[n.Name] = true
		if h, ok := n.Director.(ports.Health); ok && n.Health == nil {
			n.Health = h
		}
		m := member{NamedDirector: n, recorded: n.Name, system: "director " + n.Name, feedDoc: feedDoc + "-" + n.Name}
		if sole {
			m.recorded, m.system, m.feedDoc, m.sole = "", "director", feedDoc, true
		}
		d.members = append(d.members, m)
	}
	return d, nil
}

// Each is the configured Directors, in order.
func (d *Directors) Each() []ports.NamedDirector {
	out := make([]ports.NamedDirector, len(d.members))
	for i, m := range d.members {
		out[i] = m.NamedDirector
	}
	return out
}

// First is the first (default) Director's name.
func (d *Directors) First() string { return d.members[0].Name }

// Deployer is the Deployer of the Director an index record names (the
// first when it names none); nil when that Director has none or is not
// configured.
func (d *Directors) Deployer(recorded string) ports.Deployer {
	if recorded == "" {
		return d.members[0].Deployer
	}
	for _, m := range d.members {
		if m.recorded == recorded || m.Name == recorded {
			return m.Deployer
		}
	}
	return nil
}

// Member is the Director an index record names (the first when it names
// none); false when it is not configured.
func (d *Directors) Member(recorded string) (ports.NamedDirector, bool) {
	if recorded == "" {
		return d.members[0].NamedDirector, true
	}
	for _, m := range d.members {
		if m.recorded == recorded || m.Name == recorded {
			return m.NamedDirector, true
		}
	}
	return ports.NamedDirector{}, false
}

// ForRun is the fleet of one run: each Director behind a breaker of its
// own (threshold failures in a row open it), listed with p's retries; stop
// ends the run once no Director is left.
func (d *Directors) ForRun(threshold int, p memory.Policy, stop context.CancelCauseFunc) *Fleet {
	f := newFleet(d.members, p, stop)
	for i := range f.members {
		rm := &f.members[i]
		rm.breaker = guard.NewBreaker(rm.system, threshold, guard.DirectorFailure, f.tripper(i))
	}
	return f
}

// ListAll lists every Director's deployments outside a run, failing when
// one cannot be listed (its deployments would look gone).
func (d *Directors) ListAll(ctx context.Context) ([]bosh.Deployment, error) {
	f := d.ForRun(math.MaxInt, memory.Policy{}, func(error) {})
	all, err := f.List(ctx)
	if err != nil {
		return nil, err
	}
	if errs := f.downErrors(); len(errs) > 0 {
		return nil, errs[0]
	}
	deps, _ := f.Choose(all, nil)
	return deps, nil
}
