package reconciler

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// watcher looks at every Director's event and task feeds each
// reconciler.watch_interval between runs, on the leader, and asks for a
// run at once when they say something changed since the last complete run
// (fleet.Directors.Peek): that run reads the feeds as every run does and,
// in watch mode, fetches only what they name. Nothing changed costs each
// Director two requests; no look is taken while a run is in progress or
// asked for.
type watcher struct {
	directors *fleet.Directors
	store     memory.StateStore
	every     time.Duration
	leading   func() bool
	idle      func() bool         // no run in progress or asked for
	ask       func(reason string) // asks for a run
	log       *slog.Logger
	looks     *prometheus.CounterVec // by result: unchanged, changed, failed
}

// maxWatchReason bounds the reason a watch gives its run.
const maxWatchReason = 1024

// Serve looks every w.every until ctx ends; a zero interval is no watch
// (it waits for ctx then).
func (w *watcher) Serve(ctx context.Context) error {
	if w.every <= 0 {
		<-ctx.Done()
		return nil
	}
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if !w.leading() || !w.idle() {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, w.every)
		changed, errs := w.directors.Peek(lctx, w.store)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case len(changed) > 0:
			w.looks.WithLabelValues("changed").Inc()
			w.ask(report.Truncate("watch: "+strings.Join(changed, "; "), maxWatchReason))
		case len(errs) > 0:
			w.looks.WithLabelValues("failed").Inc()
		default:
			w.looks.WithLabelValues("unchanged").Inc()
		}
		if len(errs) > 0 && !failing { // once, until a look succeeds again
			w.log.Warn("the watch could not look at a Director's feeds; the next run reads them", "error", errs[0])
		}
		failing = len(errs) > 0
	}
}

func newWatchLooks(r prometheus.Registerer) (*prometheus.CounterVec, error) {
	reg := &registrar{reg: r}
	looks := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "blacksmith_reconciler_watch_looks_total",
		Help: "Looks the watch took at the Directors' feeds between runs (reconciler.watch_interval), by result: unchanged, changed (a run asked for), failed.",
	}, []string{"result"}))
	for _, result := range []string{"unchanged", "changed", "failed"} { // every series from the start
		looks.WithLabelValues(result)
	}
	return looks, reg.err
}
