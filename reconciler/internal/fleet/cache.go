package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/patrickmn/go-cache"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// Fetched is what is known of one deployment: its manifest and, once
// fetched, its VMs. It is never changed once cached.
//
// The copy a fetch returns holds the manifest's text; the copy the cache
// keeps between runs holds it compressed (a manifest is most of what the
// cache keeps, and a run that finds a deployment in step needs only its
// digest): Manifest inflates it for the rare run that writes it.
type Fetched struct {
	listing string            // listingKey of the entry it was fetched for
	at      time.Time         // when it was fetched
	text    string            // the manifest, in the copy a fetch returns
	zipped  zipped            // the manifest compressed, in the cached copy
	sha     [sha256.Size]byte // the manifest's SHA-256
	parse   *lazyParse        // set only in a copy that is not cached (FetchedOf, no manifest yet); else see parsed
	vms     []bosh.VM         // in the copy a fetch returns
	packed  zipped            // in the cached copy: what records take of the VMs (vms.go), compressed
	withVMs bool
	// mayAskLatest is match.MayAskLatest of the text, taken at the fetch.
	mayAskLatest bool
	memo         *memoSlot // the cached copy's (memo.go), shared with the fetch's copy; nil in the others
}

// lazyParse parses a manifest once, when it is first needed: a deployment
// matched by its name needs it only when its records are written. It also
// keeps what AsksLatest says of a manifest that may ask for "latest".
type lazyParse struct {
	once   sync.Once
	info   *match.Manifest
	err    error
	latest sync.Once
	asks   []match.Latest
	lerr   error
}

// parsed is s's lazyParse: a cached copy has none until a run needs one
// (~110 bytes a deployment between runs, which a deployment matched by its
// name and in step never needs), then keeps the one made first.
func (s *Fetched) parsed() *lazyParse {
	if s.parse != nil {
		return s.parse
	}
	if s.memo == nil { // a copy made otherwise: never expected without one
		return &lazyParse{}
	}
	if p := s.memo.parse.Load(); p != nil {
		return p
	}
	s.memo.parse.CompareAndSwap(nil, &lazyParse{})
	return s.memo.parse.Load()
}

// Info returns the parsed manifest.
func (s *Fetched) Info() (*match.Manifest, error) {
	p := s.parsed()
	p.once.Do(func() { p.info, p.err = match.Parse(s.Manifest()) })
	return p.info, p.err
}

// AsksLatest is match.AsksLatest of the manifest, read once (a manifest
// that cannot say "latest" is not even inflated).
func (s *Fetched) AsksLatest() ([]match.Latest, error) {
	if !s.mayAskLatest {
		return nil, nil
	}
	p := s.parsed()
	p.latest.Do(func() { p.asks, p.lerr = match.AsksLatest(s.Manifest()) })
	return p.asks, p.lerr
}

// Manifest is the manifest's text ("" when the deployment has none yet).
func (s *Fetched) Manifest() string {
	if s.zipped.data == nil {
		return s.text
	}
	text, err := inflate(s.zipped)
	if err != nil { // what deflate wrote in this process: never expected
		panic(fmt.Sprintf("fleet: a cached manifest does not inflate: %v", err))
	}
	return text
}

// HasManifest says whether the deployment has a manifest yet.
func (s *Fetched) HasManifest() bool { return s.text != "" || s.zipped.data != nil }

// ManifestSHA is the SHA-256 of the manifest, hex.
func (s *Fetched) ManifestSHA() string { return hex.EncodeToString(s.sha[:]) }

// kept is the copy of s the cache keeps: the manifest and the packed VMs
// compressed (against what dicts gives, nil: none).
func (s *Fetched) kept(dicts dictsFor) *Fetched {
	k := *s
	k.parse = nil // made when a run needs it (parsed)
	var packed []byte
	if s.vms != nil {
		packed = packVMs(s.vms)
	}
	var forManifest, forVMs *dictionary
	if dicts != nil {
		forManifest, forVMs = dicts(s.text, packed)
	}
	if s.text != "" {
		k.text, k.zipped = "", deflate(s.text, forManifest)
	}
	if packed != nil {
		k.vms, k.packed = nil, deflate(string(packed), forVMs)
	}
	k.memo = new(memoSlot)
	return &k
}

// Source is where a fetch goes: a run's Fleet.
type Source interface {
	// Manifest returns a deployment's manifest.
	Manifest(ctx context.Context, name string) (string, error)
	// VMs lists a deployment's VMs without a task.
	VMs(ctx context.Context, name string) ([]bosh.VM, error)
}

// Cache keeps the fetched answers across runs: a manifest and a VM list
// are fetched only for a deployment that is new, whose listing entry
// changed, or whose cached copy the run does not trust (see Trust), never
// a format=full VM listing. It is safe for concurrent use.
type Cache struct {
	cache   *cache.Cache // no expiry of its own: trust decides, Purge drops
	dicts   dictionaries // what manifests are compressed against (zip.go)
	keep    time.Duration
	now     func() time.Time
	fetches atomic.Int64 // manifests fetched
}

// NewCache creates a cache whose entries are dropped once older than keep
// (the longest any run may trust one), at the start of a run (no janitor
// goroutine).
func NewCache(keep time.Duration, now func() time.Time) *Cache {
	return &Cache{cache: cache.New(cache.NoExpiration, 0), keep: keep, now: now}
}

// Trust says whether a run may use a cached copy of deployment name fetched
// at a given time; nil trusts every copy.
type Trust func(name string, at time.Time) bool

// TrustRule is a run's rule for cached copies: in watch mode every copy the
// feeds did not name (the run dropped the named ones), but the copies of a
// Director whose feed could not be read (fallback), which go by ttl like
// every copy outside watch mode (a resync run has none left).
func TrustRule(mode string, fallback map[string]bool, ttl time.Duration, start time.Time) Trust {
	if mode == report.FeedWatch {
		if len(fallback) == 0 {
			return nil
		}
		return func(name string, at time.Time) bool { return !fallback[name] || start.Sub(at) < ttl }
	}
	return func(_ string, at time.Time) bool { return start.Sub(at) < ttl }
}

// Fetches is the number of manifests fetched so far.
func (s *Cache) Fetches() int64 { return s.fetches.Load() }

// Forget drops the cached copy of a deployment (an event says it changed).
func (s *Cache) Forget(name string) { s.cache.Delete(name) }

// Has says whether a copy of d's current listing entry is cached.
func (s *Cache) Has(d bosh.Deployment) bool {
	v, ok := s.cache.Get(d.Name)
	return ok && v.(*Fetched).listing == listingKey(d)
}

// Clear empties the cache (a forced run, a resync).
func (s *Cache) Clear() { s.cache.Flush() }

// Purge drops the entries older than keep and those of deployments no
// longer listed.
func (s *Cache) Purge(listed []bosh.Deployment) {
	names := make(map[string]struct{}, len(listed))
	for _, d := range listed {
		names[d.Name] = struct{}{}
	}
	now := s.now()
	for name, it := range s.cache.Items() {
		if _, ok := names[name]; !ok || now.Sub(it.Object.(*Fetched).at) >= s.keep {
			s.cache.Delete(name)
		}
	}
}

// cached returns the cached entry of d when it was fetched for the same
// listing entry, the run trusts it, and it holds VMs if they are needed.
func (s *Cache) cached(d bosh.Deployment, needVMs bool, tr Trust) (*Fetched, bool) {
	v, ok := s.cache.Get(d.Name)
	if !ok {
		return nil, false
	}
	e := v.(*Fetched)
	if tr != nil && !tr(d.Name, e.at) {
		return nil, false
	}
	if e.listing != listingKey(d) || (needVMs && !e.withVMs) {
		return e, false
	}
	return e, true
}

// Fetch returns what is known of d, from the cache or from src: the
// manifest, and the VM list when withVMs (both requests sent at once). A
// deployment deleted since the listing is a terminal bosh.ErrDeploymentNotFound.
func (s *Cache) Fetch(ctx context.Context, src Source, d bosh.Deployment, withVMs bool, tr Trust) (*Fetched, error) {
	return s.FetchThen(ctx, src, d, withVMs, tr, nil)
}

// FetchThen is Fetch that calls answered (unless nil), once, as soon as
// src has answered (or failed, or was not asked): before what it answered
// is compressed for the cache, which a caller holding a place at the
// Director need not hold it for (~0.1 ms of a ~10 ms fetch).
func (s *Cache) FetchThen(ctx context.Context, src Source, d bosh.Deployment, withVMs bool, tr Trust, answered func()) (*Fetched, error) {
	if answered == nil {
		answered = func() {}
	}
	old, ok := s.cached(d, withVMs, tr)
	if ok {
		answered()
		return old, nil
	}
	e := &Fetched{listing: listingKey(d), withVMs: withVMs, at: s.now()}
	var vmsErr error
	done := make(chan struct{})
	if withVMs {
		go func() { defer close(done); e.vms, vmsErr = src.VMs(ctx, d.Name) }()
	} else {
		close(done)
	}
	mfErr := s.fetchManifest(ctx, src, d, old, e)
	<-done
	answered()
	if err := errors.Join(mfErr, vmsErr); err != nil {
		return nil, err
	}
	if e.HasManifest() { // else a deploy was accepted but has not run yet: ask again next time
		k := e.kept(func(manifest string, vms []byte) (*dictionary, *dictionary) {
			return s.dicts.of(d, manifest, vms)
		})
		// What records derive of e they derive of k, which keeps what they
		// take: the run that fetched remembers for the next one (else the
		// first run after a cold one digested every deployment again,
		// inflating each one's VMs), and the manifest parsed once serves
		// both, and the copies cached after them for the same manifest.
		e.memo = k.memo
		if old != nil && old.listing == e.listing && old.memo != nil {
			if p := old.memo.parse.Load(); p != nil {
				k.memo.parse.Store(p)
			}
		}
		s.cache.SetDefault(d.Name, k)
	} else {
		e.parse = &lazyParse{}
	}
	return e, nil
}

// fetchManifest fills e's manifest, reusing old's when it was fetched for
// the same listing entry (only the VMs were missing).
func (s *Cache) fetchManifest(ctx context.Context, src Source, d bosh.Deployment, old, e *Fetched) error {
	if old != nil && old.listing == e.listing {
		e.text, e.zipped, e.sha, e.at, e.mayAskLatest = old.text, old.zipped, old.sha, old.at, old.mayAskLatest
		return nil
	}
	text, err := src.Manifest(ctx, d.Name)
	if err != nil {
		if errors.Is(err, bosh.ErrDeploymentNotFound) {
			return retry.Terminal(err)
		}
		return err
	}
	s.fetches.Add(1)
	e.text, e.sha, e.mayAskLatest = text, sha256.Sum256([]byte(text)), match.MayAskLatest(text)
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

// FetchedOf is what is known of a deployment whose manifest and VMs were
// had otherwise (not from a Director fetch): never cached.
func FetchedOf(manifest string, vms []bosh.VM) *Fetched {
	return &Fetched{text: manifest, sha: sha256.Sum256([]byte(manifest)), vms: vms, withVMs: vms != nil,
		parse: &lazyParse{}, mayAskLatest: match.MayAskLatest(manifest)}
}
