package run

import (
	"regexp"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// choice is the choice of the choice and claims phase: of the listed
// deployments, those the run deals with (not ignored, within its scope),
// and the cached copies a scoped run drops because it is forced or a
// resync (a run of the whole fleet empties the cache instead: Run,
// readFeeds).
type choice struct {
	ignore []*regexp.Regexp // Config.Ignore
}

// choiceIn is what the choice is given: the deployments listed, who owns
// each (the run's scope with them), whether the run is forced and the
// feeds' mode.
type choiceIn struct {
	deps   []bosh.Deployment
	owners owners
	force  bool
	mode   string // the feeds' view's: report.FeedWatch, FeedResync...
}

// chosen is what the choice answers: the deployments the run deals with,
// the deployments whose cached copies go, and the phase's counts of the
// summary.
type chosen struct {
	deps                      []bosh.Deployment
	forget                    []string
	seen, ignored, outOfScope int
}

// Run makes the choice.
func (c choice) Run(in choiceIn) chosen {
	out := notIgnored(in.deps, c.ignore)
	considered := len(out)
	out = in.owners.deployments(out)
	ch := chosen{deps: out, seen: len(in.deps), ignored: len(in.deps) - considered, outOfScope: considered - len(out)}
	if !in.owners.scope.Empty() && (in.force || in.mode == report.FeedResync) {
		for _, d := range out {
			ch.forget = append(ch.forget, d.Name)
		}
	}
	return ch
}

// count puts the choice's counts in the summary.
func (ch chosen) count(s *report.Summary) {
	s.DeploymentsSeen, s.Ignored, s.OutOfScope = ch.seen, ch.ignored, ch.outOfScope
}
