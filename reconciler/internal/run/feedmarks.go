package run

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
)

// feedMarks is the feed marks phase: it keeps each Director's feed mark
// for the next run, with the deployments its events named that the run
// could not fetch (quarantined, failing): the next runs fetch them as if
// named again. Only a whole run makes it: a scoped one did not deal with
// every named deployment.
type feedMarks struct {
	feeds markSaver         // the fleet's feeds
	state memory.StateStore // keeps the marks
	now   func() time.Time
	log   *slog.Logger
}

// markSaver keeps the feeds' marks (*fleet.Feeds): pending says which of a
// Director's named deployments stay named.
type markSaver interface {
	Save(ctx context.Context, store memory.StateStore, now time.Time, pending func(named map[string]bool) []string) error
}

// feedMarksIn is what the feed marks are given: the listing and which
// deployments the run fetched (the ledger's WasFetched).
type feedMarksIn struct {
	seen    listing
	fetched func(name string) bool
}

// pending is the deployments of named that stay named for the next run:
// still listed, not fetched by this one; sorted.
func (in feedMarksIn) pending(named map[string]bool) []string {
	var out []string
	for name := range named {
		if in.seen.listed[name] && !in.fetched(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Run keeps the marks; a failure is only logged (the next run reads the
// same events again), the run has no error of it.
func (f feedMarks) Run(ctx context.Context, in feedMarksIn) {
	if err := f.feeds.Save(ctx, f.state, f.now(), in.pending); err != nil {
		f.log.Warn("could not keep the event feed's mark; the next run reads the same events again", "error", err)
	}
}
