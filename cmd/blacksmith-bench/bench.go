package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultserver"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// bench holds what every size shares: the simulators' binaries and one Vault.
type bench struct {
	f      flags
	log    *slog.Logger
	tmp    string
	simBin string
	ccBin  string // the Cloud Controller simulator's, built for the platform scenario
	vault  *vaultserver.Server
	// upgraded are the numbers of instances the upgrade scenarios ran on.
	upgraded map[int]bool
}

func newBench(ctx context.Context, f flags, log *slog.Logger) (*bench, error) {
	tmp, err := os.MkdirTemp("", "blacksmith-bench-")
	if err != nil {
		return nil, err
	}
	b := &bench{f: f, log: log, tmp: tmp, simBin: filepath.Join(tmp, "bosh-director-sim"), upgraded: map[int]bool{}}
	if err := buildSim(ctx, "./cmd/bosh-director-sim", b.simBin); err != nil {
		b.close()
		return nil, err
	}
	if f.needs("platform") {
		b.ccBin = filepath.Join(tmp, "cc-sim")
		if err := buildSim(ctx, "./cmd/cc-sim", b.ccBin); err != nil {
			b.close()
			return nil, err
		}
	}
	if b.vault, err = vaultserver.Start(ctx, vaultserver.Options{}); err != nil {
		b.close()
		return nil, fmt.Errorf("starting a real Vault: %w", err)
	}
	return b, nil
}

func (b *bench) close() {
	if b.vault != nil {
		b.vault.Stop()
	}
	os.RemoveAll(b.tmp)
}

// size runs the scenarios for n deployments: the reconciler's on a fresh
// simulator and a fresh KV mount, cold first; then the fleet upgrades, each
// on a setup of its own of min(n, upgradeMax) deployments, once per bench
// for each such number (a second size of 1,000 or more would repeat them).
func (b *bench) size(ctx context.Context, n int) ([]result, error) {
	var out []result
	if slices.ContainsFunc(reconcileOrder, b.f.needs) {
		rs, err := b.reconcile(ctx, n)
		out = append(out, rs...)
		if err != nil {
			return out, err
		}
	}
	k := min(n, upgradeMax)
	if b.upgraded[k] {
		return out, nil
	}
	b.upgraded[k] = true
	for _, sc := range upgradeOrder {
		if !b.f.needs(sc) {
			continue
		}
		r, err := b.upgrade(ctx, sc, k)
		if err != nil {
			return out, fmt.Errorf("%s run over %d instances: %w", sc, k, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// reconcile runs the reconciler's scenarios for n deployments on a fresh
// simulator and a fresh KV mount: cold, then warm, and so on.
func (b *bench) reconcile(ctx context.Context, n int) ([]result, error) {
	k := max(b.f.directors, 1)
	var sims []*simProcess
	defer func() {
		for _, s := range sims {
			s.stop()
		}
	}()
	for i := range k {
		share := n / k
		if i == 0 {
			share += n % k
		}
		s, err := startSim(ctx, b.simBin, share, b.f.latency)
		if err != nil {
			return nil, err
		}
		sims = append(sims, s)
	}
	s := sims[0] // out-of-band changes (steady-1pct, gap) happen on the first Director
	mount := fmt.Sprintf("bench%d-%d", n, k)
	if err := b.vault.EnableKV(mount, 2); err != nil {
		return nil, err
	}
	store, err := vault.New(ctx, vault.Options{Address: b.vault.Addr, Token: b.vault.Token, Mount: mount, Logger: b.log})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	clock := &clock{}
	clock.set(time.Now())
	m, cfg, err := b.manager(sims, store, clock.now)
	if err != nil {
		return nil, err
	}
	var out []result
	for _, sc := range reconcileOrder {
		if !b.f.needs(sc) {
			continue
		}
		if sc == "footprint" { // the reconciler as serve runs it, last: it changes deployments out of band
			r, err := b.footprint(ctx, n, sims, store, clock)
			if err != nil {
				return out, fmt.Errorf("%s over %d deployments: %w", sc, n, err)
			}
			out = append(out, r)
			continue
		}
		if sc == "platform" { // runs of its own, each measured as a steady one
			r, err := b.platform(ctx, n, sims, store, clock)
			if b.f.scenarios[sc] && r.platformFigures != nil {
				out = append(out, r)
			}
			if err != nil {
				return out, fmt.Errorf("%s runs over %d deployments: %w", sc, n, err)
			}
			continue
		}
		changed, err := prepare(ctx, sc, n, s, clock, cfg)
		if err != nil {
			return out, fmt.Errorf("preparing the %s run over %d deployments: %w", sc, n, err)
		}
		vaultCPU, simCPU := processCPU(b.vault.Pid()), simsCPU(sims)
		r, err := measure(ctx, sc, n, b.f.latency, cfg.MaxConcurrency, sims, store, m)
		r.VaultCPUS = (processCPU(b.vault.Pid()) - vaultCPU).Seconds()
		r.SimCPUS = (simsCPU(sims) - simCPU).Seconds()
		if err != nil {
			return out, fmt.Errorf("%s run over %d deployments: %w", sc, n, err)
		}
		r.Changed = changed
		r.judge(sc, b.f.latency, cfg.MaxConcurrency)
		if r.VaultWrites > 0 {
			r.VaultCPUPerWriteMS = r.VaultCPUS * 1000 / float64(r.VaultWrites)
		}
		if b.f.scenarios[sc] {
			out = append(out, r)
		}
		if sc == "cold" {
			// A cold run grows the index before it writes; were it left
			// outgrown (its growth failed), the run after it re-shards it,
			// measured on its own, so that warm and steady measure what
			// every later run costs.
			if r, err := b.reshard(ctx, n, sims, store, m, cfg); err != nil || r != nil {
				if r != nil {
					out = append(out, *r)
				}
				if err != nil {
					return out, err
				}
			}
		}
	}
	return out, nil
}

// reshard makes the run that re-shards the index, when the cold run left
// it over vault.ShardsFor; nil when it needs none.
func (b *bench) reshard(ctx context.Context, n int, sims []*simProcess, store *vault.Store, m *reconciler.Manager, cfg config.ReconcilerConfig) (*result, error) {
	idx, err := store.Index(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the index after the cold run: %w", err)
	}
	if vault.ShardsFor(idx.Shards, len(idx.Records)) == idx.Shards {
		return nil, nil
	}
	vaultCPU := processCPU(b.vault.Pid())
	r, err := measure(ctx, "reshard", n, b.f.latency, cfg.MaxConcurrency, sims, store, m)
	r.VaultCPUS = (processCPU(b.vault.Pid()) - vaultCPU).Seconds()
	if err != nil {
		return nil, fmt.Errorf("reshard run over %d deployments: %w", n, err)
	}
	if !r.Resharded {
		return &r, fmt.Errorf("reshard run over %d deployments: the index was not re-sharded", n)
	}
	return &r, nil
}

// reconcileOrder is the order the reconciler's scenarios run in, each on
// what the one before left: cold (empty Vault and cache), warm (at once,
// nothing changed), steady (an interval later: every cached copy older
// than cache_ttl, nothing changed), steady-1pct (1% of the deployments
// changed out of band), gap (the Director keeps fewer events than changed
// since); platform, between steady and steady-1pct, is steady runs of
// reconcilers of its own, without and with the platform cross-check
// (platform.go), that leave the deployments as they found them; footprint,
// last, is the reconciler as serve runs it over what they left
// (footprint.go).
var reconcileOrder = []string{"cold", "warm", "steady", "platform", "steady-1pct", "gap", "footprint"}

// scenarioOrder is every scenario: the reconciler's, then the fleet
// upgrades (upgrade.go), each on a setup of its own.
var scenarioOrder = slices.Concat(reconcileOrder, upgradeOrder)

// clock is the reconciler's clock in the bench, moved by a scheduled
// interval between runs (the simulator's events keep real time).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond) // moves on a little, as time does
	return c.t
}

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// prepare sets the scene of a scenario; it returns how many deployments
// it changed out of band.
func prepare(ctx context.Context, sc string, n int, s *simProcess, c *clock, cfg config.ReconcilerConfig) (int, error) {
	switch sc {
	case "steady":
		c.advance(cfg.Interval)
	case "steady-1pct":
		c.advance(cfg.Interval)
		return s.changeDeployments(ctx, max(n/100, 1), "steady", false)
	case "gap":
		c.advance(cfg.Interval)
		const kept = 10
		if err := s.setEventsKept(ctx, kept); err != nil {
			return 0, err
		}
		return s.changeDeployments(ctx, max(n/100, 2*kept), "gap", true)
	}
	return 0, nil
}

// manager is a reconciler with the default configuration over the
// simulator and store, its options then changed by each of tune.
func (b *bench) manager(sims []*simProcess, store *vault.Store, now func() time.Time,
	tune ...func(*reconciler.Options)) (*reconciler.Manager, config.ReconcilerConfig, error) {
	var clients []*bosh.Client
	for i, s := range sims {
		c, err := bosh.New(bosh.Options{Name: fmt.Sprintf("director-%d", i), Address: s.url, Username: "admin", Password: "admin", Logger: b.log})
		if err != nil {
			return nil, config.ReconcilerConfig{}, err
		}
		clients = append(clients, c)
	}
	directors := []ports.NamedDirector{{Name: clients[0].Name(), Director: clients[0], Tasks: clients[0]}}
	for _, c := range clients[1:] {
		directors = append(directors, ports.NamedDirector{Name: c.Name(), Director: c, Tasks: c, Deployer: c})
	}
	cfg := config.Default().Reconciler
	cfg.HealthSweep = b.f.healthSweep
	if b.f.concurrency > 0 {
		cfg.MaxConcurrency = b.f.concurrency
	}
	opts := reconciler.Options{
		Config: cfg, Directors: directors, Store: store,
		Catalog: seedCatalog(), Logger: b.log, Now: now,
	}
	for _, t := range tune {
		t(&opts)
	}
	m, err := reconciler.New(opts)
	return m, opts.Config, err
}

// seedCatalog holds the plans the simulator seeds by default.
func seedCatalog() *catalog.Catalog {
	return &catalog.Catalog{Services: []catalog.Service{
		{ID: "redis", Name: "redis", Plans: []catalog.Plan{
			{ID: "redis-small", Name: "small", ServiceID: "redis"},
			{ID: "redis-large", Name: "large", ServiceID: "redis"},
		}},
		{ID: "postgresql", Name: "postgresql", Plans: []catalog.Plan{
			{ID: "postgresql-small", Name: "small", ServiceID: "postgresql"},
		}},
	}}
}
