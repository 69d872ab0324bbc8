package vault

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

const (
	// LayoutVersion is the index layout this package writes.
	LayoutVersion = 1
	// DefaultShards is the number of index shards of a new layout.
	DefaultShards = 128
	// LegacyIndexPath is where Blacksmith kept its single-map index.
	LegacyIndexPath = "db"

	layoutRoot  = "blacksmith" // the top-level folder of our own documents, not an instance
	metaPath    = "blacksmith/index/meta"
	shardPrefix = "blacksmith/index/v1/shards/" // of the first layout, DefaultShards shards
	hashName    = "sha256-be32"
	maxShards   = 4096
)

// layout is the meta document at {mount}/blacksmith/index/meta.
type layout struct {
	Version         int    `json:"layout_version"`
	Shards          int    `json:"shards"`
	Hash            string `json:"hash"`
	CreatedAt       string `json:"created_at,omitempty"`
	MigratedFrom    string `json:"migrated_from,omitempty"`
	MigratedRecords int    `json:"migrated_records,omitempty"`
	// Reshard is the re-shard in progress (reshard.go), nil when none.
	Reshard *reshardState `json:"reshard,omitempty"`
	// Resharded lists the re-shards done, oldest first (history is
	// appended, never rewritten).
	Resharded []reshardDone `json:"resharded,omitempty"`
	// MaxVersions is the number of KV v2 versions the layout document and
	// its shards are set to keep (versions.go), 0 until Migrate set it.
	MaxVersions int `json:"max_versions,omitempty"`
}

// ShardOf returns the shard that holds instance id in an index of n shards:
// the first 4 bytes of SHA-256(id), big-endian, modulo n. (FNV-1a is not
// used: modulo a power of two its low bits spread ids with a fixed pattern,
// such as UUIDs, over a fraction of the shards.)
func ShardOf(id string, n int) int {
	sum := sha256.Sum256([]byte(id))
	return int(binary.BigEndian.Uint32(sum[:4]) % uint32(n))
}

// ShardPath returns the path, relative to the mount, of shard i of the
// first layout (DefaultShards shards).
func ShardPath(i int) string { return fmt.Sprintf("%s%03d", shardPrefix, i) }

// shardPath returns the path of shard i of a layout of n shards: the first
// layout's paths for DefaultShards, else a folder of its own per count
// (blacksmith/index/v1/shards-1024/0042), so that a re-shard never writes
// over the shards it reads.
func shardPath(n, i int) string {
	if n == DefaultShards {
		return ShardPath(i)
	}
	return fmt.Sprintf("blacksmith/index/v1/shards-%d/%04d", n, i)
}

// indexDocs are the index's documents: its layout document and its shards,
// read (a whole index, one record's shard, the shards a write touches), the
// layout created, and their KV v2 versions bounded. Indexes, the batcher,
// the resharder and Maintenance share them.
type indexDocs struct {
	kv  *kv
	log *slog.Logger
	// count is the shard count of the index layout last read (0: none
	// yet); a record's shard is read by it, beside the layout's own read.
	count atomic.Int64
}

// readLayout returns the layout, or nil when none was written yet.
func (d *indexDocs) readLayout(ctx context.Context) (*layout, error) {
	doc, err := d.kv.read(ctx, metaPath)
	if err != nil {
		return nil, fmt.Errorf("reading the index layout: %w", err)
	}
	if err := d.notDeleted("index layout", metaPath, doc); err != nil {
		// Every shard is still there: an empty index, or a new layout and
		// a migration over it, would hide or overwrite them.
		return nil, err
	}
	if !doc.Exists {
		return nil, nil
	}
	l, err := parseLayout(d.kv.display(metaPath), doc.Data)
	if err == nil {
		d.count.Store(int64(l.Shards))
	}
	return l, err
}

// parseLayout decodes and checks the layout document data read at path.
func parseLayout(path string, data map[string]json.RawMessage) (*layout, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("index layout at %s: %w: %v", path, ErrCorrupt, err)
	}
	var l layout
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("index layout at %s: %w: %v", path, ErrCorrupt, err)
	}
	if err := l.validate(path); err != nil {
		return nil, err
	}
	return &l, nil
}

func (l *layout) validate(path string) error {
	if l.Version > LayoutVersion {
		return fmt.Errorf("index layout at %s is version %d, this build knows %d: %w",
			path, l.Version, LayoutVersion, ErrUnsupportedLayout)
	}
	if l.Version != LayoutVersion || l.Shards < 1 || l.Shards > maxShards || l.Hash != hashName {
		return fmt.Errorf("index layout at %s: %w: version %d, %d shards, hash %q",
			path, ErrCorrupt, l.Version, l.Shards, l.Hash)
	}
	if r := l.Reshard; r != nil && !validGrowth(l.Shards, r.To) {
		return fmt.Errorf("index layout at %s: %w: a re-shard from %d to %d shards (the target must be a larger power-of-two multiple, at most %d)",
			path, ErrCorrupt, l.Shards, r.To, maxShards)
	}
	return nil
}

// notDeleted refuses an index document whose latest KV v2 version was
// deleted (vault kv delete): this package never deletes one, and reading it
// as empty would hide what its earlier version holds.
func (d *indexDocs) notDeleted(what, p string, doc document) error {
	if doc.Exists || doc.Version == 0 {
		return nil
	}
	return fmt.Errorf("%s at %s: %w: deleted, version %d remains (vault kv undelete -versions=%d %s)",
		what, d.kv.display(p), ErrCorrupt, doc.Version, doc.Version, d.kv.display(p))
}

// layoutFor returns the layout to read from, or nil when the index is empty
// because nothing was ever written. A legacy index that was not migrated is
// an error: reading around it would hide every instance it holds.
func (d *indexDocs) layoutFor(ctx context.Context) (*layout, error) {
	l, err := d.readLayout(ctx)
	if err != nil || l != nil {
		return l, err
	}
	legacy, err := d.kv.read(ctx, LegacyIndexPath)
	if err != nil {
		return nil, fmt.Errorf("looking for a legacy index: %w", err)
	}
	if legacy.Exists {
		return nil, fmt.Errorf("%s holds a legacy index: %w (run Migrate)", d.kv.display(LegacyIndexPath), ErrNotMigrated)
	}
	if err := d.checkNoShards(ctx); err != nil {
		// Another process may have created the layout, then a shard, between
		// the read above and the listing (the layout is always written
		// first): read it again before calling the index damaged.
		if l, rerr := d.readLayout(ctx); rerr == nil && l != nil {
			return l, nil
		}
		return nil, err
	}
	return nil, nil
}

// checkNoShards makes sure that an index without a layout document really
// is empty: shards without it mean the document was deleted, and an empty
// index would hide every record they hold.
func (d *indexDocs) checkNoShards(ctx context.Context) error {
	names, err := d.kv.list(ctx, shardPrefix)
	if err != nil {
		return fmt.Errorf("looking for index shards: %w", err)
	}
	if len(names) == 0 {
		return nil
	}
	want, _ := json.Marshal(layout{Version: LayoutVersion, Shards: DefaultShards, Hash: hashName})
	return fmt.Errorf("index layout at %s: %w: missing while %d shards exist under %s; write it back: %s",
		d.kv.display(metaPath), ErrCorrupt, len(names), d.kv.display(shardPrefix), want)
}

// ensureLayout returns the layout, creating it when the index is new.
func (d *indexDocs) ensureLayout(ctx context.Context) (*layout, error) {
	l, err := d.layoutFor(ctx)
	if err != nil || l != nil {
		return l, err
	}
	return d.createLayout(ctx, layout{})
}

// createLayout writes a new meta document (check-and-set "absent" on KV v2,
// so that of two processes creating it at once one wins and both use it).
func (d *indexDocs) createLayout(ctx context.Context, l layout) (*layout, error) {
	l.Version, l.Shards, l.Hash = LayoutVersion, DefaultShards, hashName
	l.CreatedAt = time.Now().UTC().Format(time.RFC3339)
	err := d.kv.write(ctx, metaPath, l, 0)
	if errors.Is(err, ErrConflict) {
		if theirs, rerr := d.readLayout(ctx); rerr != nil || theirs != nil {
			return theirs, rerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("creating the index layout: %w", err)
	}
	return &l, nil
}

// validID rejects instance ids that cannot be used as a path segment: a
// slash, control characters (Go refuses them in a URL), invalid UTF-8,
// surrounding space.
func validID(id string) error {
	bad := id == "" || id == "." || id == ".." || strings.Contains(id, "/") || strings.TrimSpace(id) != id
	if bad || !printable(id) {
		return fmt.Errorf("%w: instance id %q", ErrInvalid, id)
	}
	if id == layoutRoot || id == LegacyIndexPath {
		// Its folder would be the package's own (index, history, run log,
		// state) or the legacy index: removing the instance would remove them.
		return fmt.Errorf("%w: instance id %q is reserved", ErrInvalid, id)
	}
	return nil
}

// printable reports whether s is valid UTF-8 without control characters,
// which Go refuses in a URL.
func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}
