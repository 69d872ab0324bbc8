package run

import (
	"context"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Parts are what every run is built from, made once by the Manager: the
// systems a run talks to, its configuration, and what outlives a run (the
// cache of fetched answers, the compiled matcher, the metrics).
type Parts struct {
	// Config is the reconciler's configuration, its defaults filled in.
	Config config.ReconcilerConfig
	// Directors are the configured Directors.
	Directors *fleet.Directors
	// Vault is the store, in the groups a run's guard wraps.
	Vault guard.Vault
	// Matcher ties deployments to instances.
	Matcher *match.Matcher
	// Ignore are Config.Ignore, compiled: deployments left alone.
	Ignore []*regexp.Regexp
	// Ops settles stuck operations; nil: they are listed, not settled.
	Ops ports.Operations
	// Hold holds an instance against the broker's operations (its lock,
	// its lease with HA) while a remediation deploys it; nil: not held.
	Hold func(ctx context.Context, id string) (context.Context, func(), error)
	// Renderer renders an owned instance's manifest for a remediation; nil:
	// only a manifest Vault keeps that is not recorded as drift is redeployed.
	Renderer ports.Renderer
	// Notifier hears of transitions; nil: nobody.
	Notifier ports.Notifier
	// Fence is nil without HA; else an error once this daemon lost the lease.
	Fence func() error
	// Counters hear of writes and drift (the metrics).
	Counters records.Counters
	// Cache keeps fetched answers across runs.
	Cache *fleet.Cache
	// Index keeps the index the last run read, whose unchanged shards the
	// next run does not read again; nil: every run reads them all.
	Index *KeptIndex
	// Health keeps the sweep's slot and the health document across runs;
	// nil: VM health is not checked.
	Health *health.Tracker
	// HealthPoll is how often a vm-state task is polled.
	HealthPoll time.Duration
	// Platform reads the platform's instances; nil: they are not read.
	Platform *platform.Tracker
	// Catalog says what each plan deploys now (maintenance_info); nil:
	// outdated instances are not looked for.
	Catalog *catalog.Catalog
	// Now tells the time.
	Now func() time.Time
	// Log receives the run's logs.
	Log *slog.Logger
}

// Request is one run to make.
type Request struct {
	// ID names the run.
	ID string
	// Options say what kind of run.
	Options report.RunOptions
	// Known are the conflicts the last complete run reported (by
	// memory.ConflictKey): not recorded in the history again.
	Known map[string]bool
	// Progress is where the run shows its phase and progress.
	Progress *memory.Progress
}

// Result is what a run found, for the Manager to publish.
type Result struct {
	// Summary is the run's outcome.
	Summary report.Summary
	// Orphans are the orphaned entries after the run, by instance id.
	Orphans []report.Orphan
	// Unmatched are the deployments the run could not match, by name.
	Unmatched []report.Unmatched
	// Quarantine is every quarantined item after the run; nil when the
	// quarantine could not be read.
	Quarantine []report.Quarantined
}

// KeptIndex is the index a run read, kept for the next one (which reads
// again only the shards changed since: vault.Indexes.IndexFrom). Any index
// read is a correct start: one kept by a run that overlapped costs reads,
// never a record. Safe for concurrent use; a nil KeptIndex keeps nothing.
type KeptIndex struct {
	mu  sync.Mutex
	idx *vault.Index
}

// Get is the index kept, or nil.
func (k *KeptIndex) Get() *vault.Index {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.idx
}

// Put keeps idx for the next run.
func (k *KeptIndex) Put(idx *vault.Index) {
	if k == nil {
		return
	}
	k.mu.Lock()
	k.idx = idx
	k.mu.Unlock()
}
