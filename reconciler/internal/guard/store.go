package guard

import (
	"context"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The Vault methods a run uses, in the groups Store wraps, each what one
// part of *vault.Store has: Index its Indexes, Documents its Documents,
// Backups its Archive, State its State, and Memory the Store itself.
type (
	// Index reads and changes the instance index.
	Index interface {
		Index(ctx context.Context) (*vault.Index, error)
		IndexFrom(ctx context.Context, prev *vault.Index) (*vault.Index, error)
		Update(ctx context.Context, changes map[string]vault.Change) (vault.UpdateResult, error)
		UpdateOver(ctx context.Context, changes map[string]vault.Change, base *vault.Index, atOnce int) (vault.UpdateResult, error)
		Reshard(ctx context.Context, to int) (vault.ReshardReport, error)
		Record(ctx context.Context, id string) (*vault.Record, error)
	}
	// Documents reads and writes an instance's metadata and manifest.
	Documents interface {
		Metadata(ctx context.Context, id string) (*vault.Metadata, error)
		PutMetadata(ctx context.Context, id string, md *vault.Metadata) error
		Manifest(ctx context.Context, id string) (string, bool, error)
		ReadManifest(ctx context.Context, id string) (*vault.ManifestDoc, error)
		ReplaceManifest(ctx context.Context, id, text string, over *vault.ManifestDoc) error
		Instances(ctx context.Context) (map[string]bool, error)
	}
	// Backups backs an instance up and reads its newest backup's record.
	Backups interface {
		BackupFrom(ctx context.Context, id string, docs vault.InstanceDocs) (string, error)
		BackupRunning(ctx context.Context, id, running string) (string, error)
		LatestBackupRecord(ctx context.Context, id string) (*vault.Record, string, error)
	}
	// State keeps the reconciler's own state documents.
	State interface {
		ReadState(ctx context.Context, name string, v any) (bool, error)
		WriteState(ctx context.Context, name string, v any) error
	}
	// Memory keeps the instances' histories and removes an instance's
	// records (a purge).
	Memory interface {
		AppendEvent(ctx context.Context, id string, e vault.Event) error
		PruneEvents(ctx context.Context, id string, opts vault.HistoryOptions, now time.Time) (int, error)
		Events(ctx context.Context, id string, limit int) ([]vault.Event, error)
		RemoveAll(ctx context.Context, id string) (string, error)
	}
)

// Vault is the store a run is given, in the groups Store wraps.
type Vault struct {
	Index     Index
	Documents Documents
	Backups   Backups
	Memory    Memory
	State     State
}

// Guarded is a run's Vault: the index, documents and backups behind the
// run's Vault breaker, and every write behind the fence. The reconciler's
// own documents (state, history, a purge's removal) are fenced but not
// counted by the breaker: their failures are logged, not the run's. Every
// method of every part is written out: none is passed through unwrapped.
type Guarded struct {
	Index     *IndexStore
	Documents *DocumentStore
	Backups   *BackupStore
	Memory    *MemoryStore
}

// Wrap guards v for one run: b counts its requests; fence (nil without
// HA) is checked before every write, and stop ends the run once it closes.
func Wrap(v Vault, b *Breaker, fence func() error, stop context.CancelCauseFunc) Guarded {
	g := gate{b: b, fence: fence, stop: stop}
	return Guarded{Index: &IndexStore{g, v.Index}, Documents: &DocumentStore{g, v.Documents},
		Backups: &BackupStore{g, v.Backups}, Memory: &MemoryStore{g, v.Memory, v.State}}
}

// gate is what every part shares: the breaker and the fence.
type gate struct {
	b     *Breaker
	fence func() error            // nil: no HA
	stop  context.CancelCauseFunc // ends the run when the fence closes
}

// fenced is the error of a write the daemon may no longer make (nil: go on).
func (g gate) fenced() error {
	if g.fence == nil {
		return nil
	}
	if err := g.fence(); err != nil {
		g.stop(err)
		return retry.Terminal(err)
	}
	return nil
}

// IndexStore is the guarded index.
type IndexStore struct {
	gate
	v Index
}

// DocumentStore is the guarded metadata and manifests.
type DocumentStore struct {
	gate
	v Documents
}

// BackupStore is the guarded backups.
type BackupStore struct {
	gate
	v Backups
}

// MemoryStore is the guarded state and history documents.
type MemoryStore struct {
	gate
	v  Memory
	st State
}

// Index reads every index record.
func (g *IndexStore) Index(ctx context.Context) (*vault.Index, error) {
	return Call(g.b, ctx, g.v.Index)
}

// IndexFrom reads every index record, reading again only the shards
// changed since prev was read.
func (g *IndexStore) IndexFrom(ctx context.Context, prev *vault.Index) (*vault.Index, error) {
	return Call(g.b, ctx, func(ctx context.Context) (*vault.Index, error) { return g.v.IndexFrom(ctx, prev) })
}

// Record reads one instance's index record (nil when it has none).
func (g *IndexStore) Record(ctx context.Context, id string) (*vault.Record, error) {
	return Call(g.b, ctx, func(ctx context.Context) (*vault.Record, error) { return g.v.Record(ctx, id) })
}

// Update applies index changes (a write).
func (g *IndexStore) Update(ctx context.Context, changes map[string]vault.Change) (vault.UpdateResult, error) {
	if err := g.fenced(); err != nil {
		return vault.UpdateResult{}, err
	}
	return Call(g.b, ctx, func(ctx context.Context) (vault.UpdateResult, error) { return g.v.Update(ctx, changes) })
}

// UpdateOver applies index changes over the index as read (a write).
func (g *IndexStore) UpdateOver(ctx context.Context, changes map[string]vault.Change, base *vault.Index, atOnce int) (vault.UpdateResult, error) {
	if err := g.fenced(); err != nil {
		return vault.UpdateResult{}, err
	}
	return Call(g.b, ctx, func(ctx context.Context) (vault.UpdateResult, error) {
		return g.v.UpdateOver(ctx, changes, base, atOnce)
	})
}

// Reshard moves the index to more shards (a write).
func (g *IndexStore) Reshard(ctx context.Context, to int) (vault.ReshardReport, error) {
	if err := g.fenced(); err != nil {
		return vault.ReshardReport{}, err
	}
	return Call(g.b, ctx, func(ctx context.Context) (vault.ReshardReport, error) { return g.v.Reshard(ctx, to) })
}

// Metadata reads an instance's metadata.
func (g *DocumentStore) Metadata(ctx context.Context, id string) (*vault.Metadata, error) {
	return Call(g.b, ctx, func(ctx context.Context) (*vault.Metadata, error) { return g.v.Metadata(ctx, id) })
}

// PutMetadata writes an instance's metadata.
func (g *DocumentStore) PutMetadata(ctx context.Context, id string, md *vault.Metadata) error {
	if err := g.fenced(); err != nil {
		return err
	}
	return do(g.b, ctx, func(ctx context.Context) error { return g.v.PutMetadata(ctx, id, md) })
}

// Manifest reads an instance's manifest.
func (g *DocumentStore) Manifest(ctx context.Context, id string) (string, bool, error) {
	type found struct {
		text string
		ok   bool
	}
	f, err := Call(g.b, ctx, func(ctx context.Context) (found, error) {
		text, ok, err := g.v.Manifest(ctx, id)
		return found{text, ok}, err
	})
	return f.text, f.ok, err
}

// ReadManifest reads an instance's manifest document.
func (g *DocumentStore) ReadManifest(ctx context.Context, id string) (*vault.ManifestDoc, error) {
	return Call(g.b, ctx, func(ctx context.Context) (*vault.ManifestDoc, error) { return g.v.ReadManifest(ctx, id) })
}

// ReplaceManifest writes an instance's manifest over the document read.
func (g *DocumentStore) ReplaceManifest(ctx context.Context, id, text string, over *vault.ManifestDoc) error {
	if err := g.fenced(); err != nil {
		return err
	}
	return do(g.b, ctx, func(ctx context.Context) error { return g.v.ReplaceManifest(ctx, id, text, over) })
}

// Instances lists the instance ids that have documents.
func (g *DocumentStore) Instances(ctx context.Context) (map[string]bool, error) {
	return Call(g.b, ctx, g.v.Instances)
}

// BackupFrom backs an instance up from what was read of it (a write).
func (g *BackupStore) BackupFrom(ctx context.Context, id string, docs vault.InstanceDocs) (string, error) {
	if err := g.fenced(); err != nil {
		return "", err
	}
	return Call(g.b, ctx, func(ctx context.Context) (string, error) { return g.v.BackupFrom(ctx, id, docs) })
}

// BackupRunning backs an instance up with the manifest its Director runs,
// before a deploy replaces it (a write).
func (g *BackupStore) BackupRunning(ctx context.Context, id, running string) (string, error) {
	if err := g.fenced(); err != nil {
		return "", err
	}
	return Call(g.b, ctx, func(ctx context.Context) (string, error) { return g.v.BackupRunning(ctx, id, running) })
}

// LatestBackupRecord reads the record of an instance's newest backup.
func (g *BackupStore) LatestBackupRecord(ctx context.Context, id string) (*vault.Record, string, error) {
	type latest struct {
		rec *vault.Record
		id  string
	}
	l, err := Call(g.b, ctx, func(ctx context.Context) (latest, error) {
		rec, id, err := g.v.LatestBackupRecord(ctx, id)
		return latest{rec, id}, err
	})
	return l.rec, l.id, err
}

// ReadState reads one of the reconciler's state documents (not counted).
func (g *MemoryStore) ReadState(ctx context.Context, name string, v any) (bool, error) {
	return g.st.ReadState(ctx, name, v)
}

// WriteState writes one of the reconciler's state documents (fenced, not counted).
func (g *MemoryStore) WriteState(ctx context.Context, name string, v any) error {
	if err := g.fenced(); err != nil {
		return err
	}
	return g.st.WriteState(ctx, name, v)
}

// AppendEvent adds an event to an instance's history (fenced, not counted).
func (g *MemoryStore) AppendEvent(ctx context.Context, id string, e vault.Event) error {
	if err := g.fenced(); err != nil {
		return err
	}
	return g.v.AppendEvent(ctx, id, e)
}

// PruneEvents drops an instance's events beyond the retention (fenced, not counted).
func (g *MemoryStore) PruneEvents(ctx context.Context, id string, opts vault.HistoryOptions, now time.Time) (int, error) {
	if err := g.fenced(); err != nil {
		return 0, err
	}
	return g.v.PruneEvents(ctx, id, opts, now)
}

// Events reads an instance's history, newest first (not counted).
func (g *MemoryStore) Events(ctx context.Context, id string, limit int) ([]vault.Event, error) {
	return g.v.Events(ctx, id, limit)
}

// RemoveAll removes an instance's records after a full backup (fenced, not counted).
func (g *MemoryStore) RemoveAll(ctx context.Context, id string) (string, error) {
	if err := g.fenced(); err != nil {
		return "", err
	}
	return g.v.RemoveAll(ctx, id)
}
