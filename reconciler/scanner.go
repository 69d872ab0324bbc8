package reconciler

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/patrickmn/go-cache"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// scanned is what the scanner knows of one deployment: its manifest and,
// once fetched, its VMs. It is never changed once cached.
type scanned struct {
	listing  string    // listingKey of the entry it was fetched for
	at       time.Time // when it was fetched
	manifest string
	parse    *lazyParse // shared by the entries of one manifest
	vms      []bosh.VM
	withVMs  bool
}

// lazyParse parses a manifest once, when it is first needed: a deployment
// matched by its name needs it only when its records are written.
type lazyParse struct {
	once sync.Once
	info *manifestInfo
	err  error
}

// info returns the parsed manifest.
func (s *scanned) info() (*manifestInfo, error) {
	s.parse.once.Do(func() { s.parse.info, s.parse.err = parseManifest(s.manifest) })
	return s.parse.info, s.parse.err
}

// scanner lists the Director's deployments and fetches (and caches) what a
// run needs of each: a manifest and a VM list only for a deployment that is
// new, whose listing entry changed, or whose cached copy the run does not
// trust (see trust), never a format=full VM listing.
type scanner struct {
	cache   *cache.Cache // no expiry of its own: trust decides, purge drops
	keep    time.Duration
	now     func() time.Time
	fetches atomic.Int64 // manifests fetched, for the run summary
}

// newScanner creates a scanner whose entries are dropped once older than
// keep (the longest any run may trust one), at the start of a run (no
// janitor goroutine).
func newScanner(keep time.Duration, now func() time.Time) *scanner {
	return &scanner{cache: cache.New(cache.NoExpiration, 0), keep: keep, now: now}
}

// trust says whether a run may use a cached copy of deployment name fetched
// at a given time; nil trusts every copy.
type trust func(name string, at time.Time) bool

// forget drops the cached copy of a deployment (the event feed says it changed).
func (s *scanner) forget(name string) { s.cache.Delete(name) }

// has says whether a copy of d's current listing entry is cached.
func (s *scanner) has(d bosh.Deployment) bool {
	v, ok := s.cache.Get(d.Name)
	return ok && v.(*scanned).listing == listingKey(d)
}

// clear empties the cache (a forced run).
func (s *scanner) clear() { s.cache.Flush() }

// purge drops the entries older than keep and those of deployments no
// longer listed.
func (s *scanner) purge(listed []bosh.Deployment) {
	names := make(map[string]struct{}, len(listed))
	for _, d := range listed {
		names[d.Name] = struct{}{}
	}
	now := s.now()
	for name, it := range s.cache.Items() {
		if _, ok := names[name]; !ok || now.Sub(it.Object.(*scanned).at) >= s.keep {
			s.cache.Delete(name)
		}
	}
}

// cached returns the cached entry of d when it was fetched for the same
// listing entry, the run trusts it, and it holds VMs if they are needed.
func (s *scanner) cached(d bosh.Deployment, needVMs bool, tr trust) (*scanned, bool) {
	v, ok := s.cache.Get(d.Name)
	if !ok {
		return nil, false
	}
	e := v.(*scanned)
	if tr != nil && !tr(d.Name, e.at) {
		return nil, false
	}
	if e.listing != listingKey(d) || (needVMs && !e.withVMs) {
		return e, false
	}
	return e, true
}

// fetch returns what is known of d, from the cache or from the Director
// (the run's, behind its breaker): the manifest, and the VM list when
// withVMs (both requests sent at once).
func (s *scanner) fetch(ctx context.Context, dir Director, d bosh.Deployment, withVMs bool, tr trust) (*scanned, error) {
	old, ok := s.cached(d, withVMs, tr)
	if ok {
		return old, nil
	}
	e := &scanned{listing: listingKey(d), withVMs: withVMs, at: s.now()}
	var vmsErr error
	done := make(chan struct{})
	if withVMs {
		go func() { defer close(done); e.vms, vmsErr = dir.VMs(ctx, d.Name) }()
	} else {
		close(done)
	}
	mfErr := s.fetchManifest(ctx, dir, d, old, e)
	<-done
	if err := errors.Join(mfErr, vmsErr); err != nil {
		return nil, err
	}
	if e.manifest != "" { // a deploy was accepted but has not run yet: ask again next time
		s.cache.SetDefault(d.Name, e)
	}
	return e, nil
}

// fetchManifest fills e's manifest, reusing old's when it was fetched for
// the same listing entry (only the VMs were missing).
func (s *scanner) fetchManifest(ctx context.Context, dir Director, d bosh.Deployment, old, e *scanned) error {
	if old != nil && old.listing == e.listing {
		e.manifest, e.parse, e.at = old.manifest, old.parse, old.at
		return nil
	}
	text, err := dir.Manifest(ctx, d.Name)
	if err != nil {
		if errors.Is(err, bosh.ErrDeploymentNotFound) {
			return retry.Terminal(err)
		}
		return err
	}
	s.fetches.Add(1)
	e.manifest, e.parse = text, &lazyParse{}
	return nil
}

// listingKey sums up what the cheap listing says of a deployment, so that a
// cached answer is used only while that stays the same. The listing is
// asked without stemcells (exclude_stemcells), so they are not part of it.
func listingKey(d bosh.Deployment) string {
	var b strings.Builder
	for _, r := range d.Releases {
		b.WriteString(r.Name + "/" + r.Version + ",")
	}
	b.WriteString("|" + strconv.FormatBool(d.Locked))
	return b.String()
}
