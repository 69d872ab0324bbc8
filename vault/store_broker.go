package vault

import (
	"context"
	"time"
)

// The Store's own methods are what the broker uses of it (broker.Store):
// each is its part's, documented there.

// Record is Indexes.Record: the index record of id, nil when there is none.
func (s *Store) Record(ctx context.Context, id string) (*Record, error) {
	return s.Indexes.Record(ctx, id)
}

// Index is Indexes.Index: every record of the index.
func (s *Store) Index(ctx context.Context) (*Index, error) { return s.Indexes.Index(ctx) }

// Update is Indexes.Update: changes to the index, grouped per shard.
func (s *Store) Update(ctx context.Context, changes map[string]Change) (UpdateResult, error) {
	return s.Indexes.Update(ctx, changes)
}

// Secret is Secrets.Secret: the data at path and whether it exists.
func (s *Store) Secret(ctx context.Context, path string) (map[string]any, bool, error) {
	return s.Secrets.Secret(ctx, path)
}

// PutSecret is Secrets.PutSecret: data written at path.
func (s *Store) PutSecret(ctx context.Context, path string, data map[string]any) error {
	return s.Secrets.PutSecret(ctx, path, data)
}

// CreateSecret is Secrets.CreateSecret: data written at path only when
// nothing is there.
func (s *Store) CreateSecret(ctx context.Context, path string, data map[string]any) error {
	return s.Secrets.CreateSecret(ctx, path, data)
}

// UpdateSecret is Secrets.UpdateSecret: the secret at path changed by
// check-and-set.
func (s *Store) UpdateSecret(ctx context.Context, path string, change func(cur map[string]any, ok bool) (map[string]any, error)) error {
	return s.Secrets.UpdateSecret(ctx, path, change)
}

// AppendEvent is History.AppendEvent: e added to id's history.
func (s *Store) AppendEvent(ctx context.Context, id string, e Event) error {
	return s.History.AppendEvent(ctx, id, e)
}

// PruneEvents is History.PruneEvents: id's history pruned to opts at now.
func (s *Store) PruneEvents(ctx context.Context, id string, opts HistoryOptions, now time.Time) (int, error) {
	return s.History.PruneEvents(ctx, id, opts, now)
}

// LastEvent is History.LastEvent: when an event of kind was last appended
// to id's history.
func (s *Store) LastEvent(ctx context.Context, id, kind string) (time.Time, bool, error) {
	return s.History.LastEvent(ctx, id, kind)
}

// Events is History.Events: id's history, newest first.
func (s *Store) Events(ctx context.Context, id string, limit int) ([]Event, error) {
	return s.History.Events(ctx, id, limit)
}

// Backup is Archive.Backup: a backup of id's record, metadata and manifest.
func (s *Store) Backup(ctx context.Context, id string) (string, error) {
	return s.Archive.Backup(ctx, id)
}

// BackupAll is Archive.BackupAll: Backup with every secret of id.
func (s *Store) BackupAll(ctx context.Context, id string) (string, error) {
	return s.Archive.BackupAll(ctx, id)
}

// BackupRunning is Archive.BackupRunning: BackupAll with the manifest the
// Director runs.
func (s *Store) BackupRunning(ctx context.Context, id, running string) (string, error) {
	return s.Archive.BackupRunning(ctx, id, running)
}

// Backups is Archive.Backups: the backup ids of id, newest first.
func (s *Store) Backups(ctx context.Context, id string) ([]string, error) {
	return s.Archive.Backups(ctx, id)
}

// BackupSecret is Archive.BackupSecret: the secret at path kept in backup
// backupID of id.
func (s *Store) BackupSecret(ctx context.Context, id, backupID, path string) (map[string]any, bool, error) {
	return s.Archive.BackupSecret(ctx, id, backupID, path)
}

// Manifest is Documents.Manifest: the manifest text of id and whether
// there is one.
func (s *Store) Manifest(ctx context.Context, id string) (string, bool, error) {
	return s.Documents.Manifest(ctx, id)
}

// PutManifest is Documents.PutManifest: text stored as the manifest of id.
func (s *Store) PutManifest(ctx context.Context, id, text string) error {
	return s.Documents.PutManifest(ctx, id, text)
}

// AllowedNow is Documents.AllowedNow: the classes id's allowance allows at
// now.
func (s *Store) AllowedNow(ctx context.Context, id string, now time.Time) ([]string, error) {
	return s.Documents.AllowedNow(ctx, id, now)
}

// RemoveAll removes an instance as a deprovision does (remover.RemoveAll):
// one backup of all of it, then its secrets and its index record.
func (s *Store) RemoveAll(ctx context.Context, id string) (string, error) {
	return s.removal.RemoveAll(ctx, id)
}

// DeleteSecretsBackedUp takes a BackupAll of id, then deletes the given
// secrets, as an unbind does (remover.DeleteSecretsBackedUp).
func (s *Store) DeleteSecretsBackedUp(ctx context.Context, id string, paths ...string) (string, error) {
	return s.removal.DeleteSecretsBackedUp(ctx, id, paths...)
}
