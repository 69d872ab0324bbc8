package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/versions"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// uploads says what a Director has uploaded; *bosh.Client has it. A
// Director whose client has not is not asked (its instances are unknown).
type uploads interface {
	// Releases is GET /releases.
	Releases(ctx context.Context) ([]bosh.Release, error)
	// Stemcells is GET /stemcells.
	Stemcells(ctx context.Context) ([]bosh.Stemcell, error)
}

var _ uploads = (*bosh.Client)(nil)

// uploadsTimeout bounds what a Director takes to answer both.
const uploadsTimeout = time.Minute

// errNotCached refuses the fetch of a manifest the run does not have.
var errNotCached = errors.New("manifest not cached")

// cachedOnly is a fleet.Source that fetches nothing: a cache lookup through
// it gives only a copy cached for the deployment's current listing entry.
type cachedOnly struct{}

func (cachedOnly) Manifest(context.Context, string) (string, error) { return "", errNotCached }
func (cachedOnly) VMs(context.Context, string) ([]bosh.VM, error)   { return nil, errNotCached }

// behindLook finds the instances behind their Director for the outdated
// phase: what it reads with (the cache of fetched answers and which copies
// the run may use, the Directors and which are out of the run) and logs to.
type behindLook struct {
	cache     *fleet.Cache
	trust     fleet.Trust
	directors *fleet.Directors
	down      func(director string) bool // out of the run: not listed, or its breaker open
	log       *slog.Logger
}

// Run finds the instances whose manifest asks for the latest of a
// release or stemcell that their Director has in a newer version than their
// deployment runs. What a deployment runs comes from the run's listing
// (releases) and GET /stemcells (which deployments use each stemcell); what
// it asks for from the manifest the run has cached for its listing entry,
// never fetched for this. A Director is asked GET /releases and GET
// /stemcells once each, and only when one of its instances asks for the
// latest of a release, of a stemcell. A Director that cannot answer is an
// error of the report, not of the run. Nil when no instance known to the
// run asks for a latest, or the run is stopping.
func (b behindLook) Run(ctx context.Context, seen listing, deps []bosh.Deployment) *report.BehindReport {
	if ctx.Err() != nil {
		return nil
	}
	byDirector, plans, unknown := b.askingLatest(ctx, seen, deps)
	if len(byDirector) == 0 && unknown == 0 {
		return nil
	}
	var list []report.Behind
	var errs []string
	for _, director := range slices.Sorted(maps.Keys(byDirector)) {
		cands := byDirector[director]
		u, name, err := b.uploadsOf(ctx, director, cands)
		if u == nil {
			unknown += len(cands)
		}
		if err != nil {
			b.log.Warn("releases or stemcells not read: instances asking for latest not judged", "director", name, "error", err)
			errs = append(errs, report.Truncate(fmt.Sprintf("Director %s: %v", name, err), memory.MaxErrorText))
		}
		if u == nil {
			continue
		}
		for _, c := range cands {
			if lags := versions.Lags(c, *u); len(lags) > 0 {
				list = append(list, report.Behind{InstanceID: c.InstanceID, ServiceID: c.ServiceID, PlanID: c.PlanID,
					Deployment: c.Deployment, Director: c.Director, Lags: lags})
			}
		}
	}
	return versions.SummarizeBehind(list, plans, unknown, errs)
}

// askingLatest are the instances of the listed deployments (their index
// record not orphaned) whose cached manifest asks for a latest, by the
// Director that listed them; how many of each plan; and how many could
// not be told (no cached copy, a manifest that cannot be read).
func (b behindLook) askingLatest(ctx context.Context, seen listing, deps []bosh.Deployment) (map[string][]versions.Candidate, map[string]int, int) {
	byDirector, plans, unknown := map[string][]versions.Candidate{}, map[string]int{}, 0
	for _, d := range deps {
		id, ok := seen.byDep[d.Name]
		rec := seen.index[id]
		if !ok || rec == nil || rec.Orphaned {
			continue
		}
		f, err := b.cache.Fetch(ctx, cachedOnly{}, d, false, b.trust)
		if err != nil || !f.HasManifest() {
			unknown++
			continue
		}
		asks, err := f.AsksLatest()
		if err != nil {
			b.log.Debug("manifest not read for latest versions", "deployment", d.Name, "error", err)
			unknown++
			continue
		}
		if len(asks) == 0 {
			continue
		}
		plans[rec.PlanID]++
		byDirector[d.Director] = append(byDirector[d.Director], versions.Candidate{InstanceID: id, ServiceID: rec.ServiceID,
			PlanID: rec.PlanID, Deployment: d.Name, Director: d.Director, Asks: asks, Releases: d.Releases})
	}
	return byDirector, plans, unknown
}

// uploadsOf asks a Director (as records name it) what it has uploaded: the
// releases when a candidate asks for a latest release, the stemcells when
// one asks for a latest stemcell. Nil when it was not asked (not
// configured, out of the run, no such calls) or both answers failed; the
// error says what failed.
func (b behindLook) uploadsOf(ctx context.Context, director string, cands []versions.Candidate) (*versions.Uploads, string, error) {
	named, ok := b.directors.Member(director)
	name := cmp.Or(named.Name, director)
	up, can := named.Director.(uploads)
	if !ok || !can || b.down(named.Name) {
		return nil, name, nil
	}
	ctx, cancel := context.WithTimeout(ctx, uploadsTimeout)
	defer cancel()
	var u versions.Uploads
	var errs []error
	if asksFor(cands, false) {
		rels, err := up.Releases(ctx)
		u.Releases, u.ReleasesKnown, errs = rels, err == nil, append(errs, err)
	}
	if asksFor(cands, true) {
		stems, err := up.Stemcells(ctx)
		u.Stemcells, u.StemcellsKnown, errs = stems, err == nil, append(errs, err)
	}
	if !u.ReleasesKnown && !u.StemcellsKnown {
		return nil, name, errors.Join(errs...)
	}
	return &u, name, errors.Join(errs...)
}

// asksFor says whether a candidate asks for a latest stemcell (stemcell),
// or a latest release.
func asksFor(cands []versions.Candidate, stemcell bool) bool {
	return slices.ContainsFunc(cands, func(c versions.Candidate) bool {
		return slices.ContainsFunc(c.Asks, func(a match.Latest) bool { return a.Stemcell == stemcell })
	})
}
