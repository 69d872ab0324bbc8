package vault

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Archive is each instance's backups: taken (Backup, BackupAll,
// BackupRunning, BackupFrom), listed (Backups) and read (BackupParts,
// BackupRecord, BackupManifest, BackupSecret, LatestBackupRecord). A Store
// has it (Store.Archive); Restores put one back.
type Archive struct {
	kv     *kv
	opts   *BackupOptions
	locks  *mountLocks
	log    *slog.Logger
	reader *stateReader
}

// backupName is a parsed backup id: "{unix}" or, for the n-th further backup
// taken in the same second, "{unix}-{n}".
type backupName struct {
	unix int64
	n    int
}

func (b backupName) String() string {
	if b.n == 0 {
		return strconv.FormatInt(b.unix, 10)
	}
	return fmt.Sprintf("%d-%d", b.unix, b.n)
}

func parseBackupName(s string) (backupName, bool) {
	ts, n, found := strings.Cut(s, "-")
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || unix < 0 {
		return backupName{}, false
	}
	b := backupName{unix: unix}
	if found {
		if b.n, err = strconv.Atoi(n); err != nil || b.n < 1 {
			return backupName{}, false
		}
	}
	return b, b.String() == s
}

func newerFirst(a, b backupName) int {
	if c := cmp.Compare(b.unix, a.unix); c != 0 {
		return c
	}
	return cmp.Compare(b.n, a.n)
}

func (a *Archive) backupPath(id, name string) string {
	return id + "/" + a.opts.Path + "/" + name
}

// Backup snapshots the index record, metadata (history included) and
// manifest of id at {mount}/{id}/{backup path}/{unix}, or {unix}-{n} for the
// n-th further backup in the same second (always newer than the newest
// existing backup), then deletes the oldest backups
// beyond the retention (when cleanup is on). It returns the backup id, ""
// when backups are off, and ErrNotFound when the instance has none of the
// three. On KV v2 a backup never overwrites another (check-and-set); on KV v1
// only backups taken by the same process are guaranteed distinct. It holds
// no secret: see BackupAll.
func (a *Archive) Backup(ctx context.Context, id string) (string, error) {
	return a.backup(ctx, id, false)
}

// BackupAll is Backup plus every secret stored under {mount}/{id}/ other
// than the instance's metadata, manifest and backups (found by listing,
// recursively, at most 1,000 paths: ErrTooLarge beyond), in the backup's
// "secrets" part. A KV v2 secret whose latest version is deleted is not
// included. ErrNotFound when the instance has nothing to back up.
func (a *Archive) BackupAll(ctx context.Context, id string) (string, error) {
	return a.backup(ctx, id, true)
}

// BackupRunning is BackupAll with the manifest part being running, the
// manifest the Director runs now (not the one Vault records, which may
// differ: an adopted instance, a change behind the broker's back): taken
// before every deploy, it holds what the deploy replaces.
func (a *Archive) BackupRunning(ctx context.Context, id, running string) (string, error) {
	return a.backupOf(ctx, id, true, nil, &running)
}

// InstanceDocs are an instance's metadata and manifest documents as the
// caller read them (Metadata and ReadManifest), to be written over with
// check-and-set on the versions read (PutMetadata, ReplaceManifest).
type InstanceDocs struct {
	// Metadata is nil when there was none.
	Metadata *Metadata
	Manifest *ManifestDoc
	// Record is the instance's index record as the caller read it (nil:
	// read it). The reconciler gives the one its run read at its start:
	// the fields its index change sets are its own, written by no one
	// else between, and the change keeps every other field as it is then.
	Record *Record
}

// BackupFrom is Backup with the metadata and manifest taken from docs, not
// read again: the caller's writes over them are check-and-set on the
// versions read, so that the backup holds what they replace (a document
// changed in between fails its write, and the caller reads and backs up
// again). Docs without the manifest (not read) are not used: it is Backup.
// Metadata that Metadata did not return is read as Backup reads it. The
// index record is docs.Record when set (no shard is read), else read with
// the listing of the backups, at once.
func (a *Archive) BackupFrom(ctx context.Context, id string, docs InstanceDocs) (string, error) {
	if docs.Manifest == nil {
		return a.backupOf(ctx, id, false, nil, nil)
	}
	return a.backupOf(ctx, id, false, &docs, nil)
}

func (a *Archive) backup(ctx context.Context, id string, secrets bool) (string, error) {
	return a.backupOf(ctx, id, secrets, nil, nil)
}

// backupOf takes a backup of id; docs (nil: none) holds parts the caller
// read, running (nil: none) the manifest the Director runs.
func (a *Archive) backupOf(ctx context.Context, id string, secrets bool, docs *InstanceDocs, running *string) (string, error) {
	if !a.opts.Enabled {
		return "", nil
	}
	if err := validID(id); err != nil {
		return "", err
	}
	defer a.lockBackups(id)()
	var names []backupName
	st, err := a.reader.readState(ctx, id, secrets, docs, func(ctx context.Context) (err error) {
		names, err = a.backupNames(ctx, id)
		return err
	})
	if err == nil && running != nil {
		st.manifest, err = json.Marshal(*running)
	}
	if err == nil && st.empty() {
		err = ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("backing up %s: %w", id, err)
	}
	name, err := a.writeBackup(ctx, id, st.document(id), names)
	if err != nil {
		return "", fmt.Errorf("backing up %s: %w", id, err)
	}
	a.prune(ctx, id, append(names, name))
	return name.String(), nil
}

// lockBackups serializes, within the process, the naming of id's backups;
// it returns the unlock.
func (a *Archive) lockBackups(id string) func() {
	mu := &a.locks.backups[ShardOf(id, len(a.locks.backups))]
	mu.Lock()
	return mu.Unlock
}

// writeBackup writes snap under a name newer than every existing one: this
// second, or {unix}-{n+1} after the newest of this second (names are never
// reused, even after cleanup, so the order of names is the order taken).
func (a *Archive) writeBackup(ctx context.Context, id string, snap map[string]json.RawMessage, existing []backupName) (backupName, error) {
	name := backupName{unix: time.Now().Unix()}
	if len(existing) > 0 && existing[0].unix >= name.unix { // existing is newest first
		name = backupName{unix: existing[0].unix, n: existing[0].n + 1}
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		err := a.kv.write(ctx, a.backupPath(id, name.String()), snap, 0)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, ErrConflict) {
			return backupName{}, err
		}
		name.n++
	}
	return backupName{}, fmt.Errorf("no free backup name in second %d: %w", name.unix, ErrConflict)
}

// prune deletes the oldest backups beyond the retention. A failure is logged:
// the backup itself was taken.
func (a *Archive) prune(ctx context.Context, id string, names []backupName) {
	keep := a.opts.Retention
	if !a.opts.Cleanup || keep <= 0 || len(names) <= keep {
		return
	}
	slices.SortFunc(names, newerFirst)
	for _, old := range names[keep:] {
		if err := a.kv.remove(ctx, a.backupPath(id, old.String())); err != nil {
			a.log.Warn("deleting an old backup failed", "instance", id, "backup", old.String(), "error", err)
		}
	}
}

func (a *Archive) backupNames(ctx context.Context, id string) ([]backupName, error) {
	keys, err := a.kv.list(ctx, id+"/"+a.opts.Path+"/")
	if err != nil {
		return nil, err
	}
	var names []backupName
	for _, k := range keys {
		if b, ok := parseBackupName(k); ok {
			names = append(names, b)
		}
	}
	slices.SortFunc(names, newerFirst)
	return names, nil
}

// Backups returns the backup ids of id, newest first.
func (a *Archive) Backups(ctx context.Context, id string) ([]string, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	names, err := a.backupNames(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("listing the backups of %s: %w", id, err)
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n.String()
	}
	return out, nil
}

// LatestBackupRecord returns the index record kept in id's newest backup
// and that backup's id: nil when id has no backup or its newest holds no
// record (backup id "" when there is none). A record that is not an object
// is ErrCorrupt, naming the backup; fields of an unexpected type are kept
// raw, as Index keeps them.
func (a *Archive) LatestBackupRecord(ctx context.Context, id string) (*Record, string, error) {
	ids, err := a.Backups(ctx, id)
	if err != nil || len(ids) == 0 {
		return nil, "", err
	}
	p := a.backupPath(id, ids[0])
	doc, err := a.kv.read(ctx, p)
	if err != nil || !doc.Exists {
		return nil, ids[0], err
	}
	raw, ok := doc.Data["record"]
	if !ok || string(raw) == "null" {
		return nil, ids[0], nil
	}
	rec, problems := decodeRecord(a.kv.display(p), id, raw)
	if rec == nil {
		return nil, ids[0], fmt.Errorf("backup %s: its record: %w", a.kv.display(p), problems[0])
	}
	return rec, ids[0], nil
}
