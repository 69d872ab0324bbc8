package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// remover removes an instance (RemoveAll) or some of its secrets
// (DeleteSecretsBackedUp), each backed up first.
type remover struct {
	kv      *kv
	opts    *BackupOptions
	archive *Archive
	reader  *stateReader
	batch   *batcher
}

// RemoveAll removes an instance as a deprovision does: one backup of all
// that BackupAll would back up, then every secret under {id}/ except the
// instance's metadata, manifest and backups, then its index record, without
// a second backup. It returns the id of the backup that holds what was
// removed, or "" when backups are off (nothing is backed up) or nothing was
// left to remove (no record, no secret), which is not an error. When the
// backup fails nothing is deleted.
//
// A RemoveAll that failed half-way (Vault gone after some deletes) is safe
// to call again, and the newest backup then still holds every secret the
// removal deleted: when the newest backup was taken by a RemoveAll and holds
// everything still there (same JSON), it is the backup, and none is taken;
// otherwise the new backup also carries the record and the secrets of that
// newest RemoveAll backup that are gone now (listed in its "carried" key).
// Ids are not reused: were an id removed, used again and removed again with
// no backup between, the second removal's backup would carry the first
// one's secrets too.
func (rm *remover) RemoveAll(ctx context.Context, id string) (string, error) {
	if err := validID(id); err != nil {
		return "", err
	}
	st, err := rm.reader.readState(ctx, id, true, nil, nil)
	if err != nil {
		return "", fmt.Errorf("removing %s: nothing deleted: %w", id, err)
	}
	if st.record == nil && len(st.secrets) == 0 {
		return "", nil
	}
	backupID, err := rm.removalBackup(ctx, id, st)
	if err != nil {
		return "", fmt.Errorf("removing %s: backing up first, nothing deleted: %w", id, err)
	}
	for _, p := range slices.Sorted(maps.Keys(st.secrets)) {
		if err := rm.kv.remove(ctx, p); err != nil {
			return backupID, fmt.Errorf("removing %s (%s; remove it again): %w", id, heldBy(backupID), err)
		}
	}
	if st.record != nil {
		if _, err := rm.batch.apply(ctx, map[string]edit{id: {remove: true}}); err != nil {
			return backupID, fmt.Errorf("removing %s (%s; remove it again): %w", id, heldBy(backupID), err)
		}
	}
	return backupID, nil
}

// heldBy says, in an error, where what was deleted can be found.
func heldBy(backupID string) string {
	if backupID == "" {
		return "backups are off"
	}
	return "backup " + backupID + " holds it all"
}

// removalBackup takes RemoveAll's backup of st, or reuses the newest backup
// (see RemoveAll).
func (rm *remover) removalBackup(ctx context.Context, id string, st *state) (string, error) {
	if !rm.opts.Enabled {
		return "", nil
	}
	defer rm.archive.lockBackups(id)()
	names, err := rm.archive.backupNames(ctx, id)
	if err != nil {
		return "", err
	}
	doc := st.document(id)
	if len(names) > 0 {
		prev, err := rm.archive.readBackup(ctx, id, names[0].String())
		switch {
		case errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotFound):
			// Nothing usable to carry: a fresh backup.
		case err != nil:
			return "", err
		case !prev.removal:
		case prev.holds(st):
			return names[0].String(), nil
		default:
			carry(doc, st, prev, names[0].String())
		}
	}
	doc["removal"] = json.RawMessage("true")
	name, err := rm.archive.writeBackup(ctx, id, doc, names)
	if err != nil {
		return "", err
	}
	rm.archive.prune(ctx, id, append(names, name))
	return name.String(), nil
}

// holds reports whether the backup holds every part of st, with the same
// JSON.
func (b *backupParts) holds(st *state) bool {
	same := func(have []byte, want json.RawMessage) bool {
		return want == nil || have != nil && sameJSON(have, want)
	}
	if !same(b.record, st.record) || !same(b.raw["metadata"], st.metadata) || !same(b.raw["manifest"], st.manifest) {
		return false
	}
	for p, raw := range st.secrets {
		if !same(b.secrets[p], raw) {
			return false
		}
	}
	return true
}

// carry adds to doc, the backup document of st, the record and secrets that
// the earlier backup prev (named from) holds and st lacks.
func carry(doc map[string]json.RawMessage, st *state, prev *backupParts, from string) {
	var carried []string
	if st.record == nil && prev.record != nil {
		doc["record"] = prev.record
		carried = append(carried, "record")
	}
	secrets := maps.Clone(st.secrets)
	if secrets == nil {
		secrets = map[string]json.RawMessage{}
	}
	for p, raw := range prev.secrets {
		if _, ok := secrets[p]; !ok {
			secrets[p] = raw
			carried = append(carried, p)
		}
	}
	if len(carried) == 0 {
		return
	}
	slices.Sort(carried)
	doc["secrets"] = encodeEntries(secrets)
	doc["carried_from"], _ = json.Marshal(from)
	doc["carried"], _ = json.Marshal(carried)
}

// DeleteSecretsBackedUp takes a BackupAll of id, then deletes the given
// secrets (on KV v2 with every version), as an unbind does. Every path must
// name a secret of id: under {id}/, and not its metadata, manifest or
// backups (ErrInvalid, nothing backed up or deleted otherwise). When the
// backup fails nothing is deleted. It returns the backup id ("" when backups
// are off, or when the instance had nothing to back up, so nothing to delete).
// Deleting an absent secret is not an error.
func (rm *remover) DeleteSecretsBackedUp(ctx context.Context, id string, paths ...string) (string, error) {
	if err := validID(id); err != nil {
		return "", err
	}
	for _, p := range paths {
		if err := instanceSecret(id, rm.opts.Path, p); err != nil {
			return "", err
		}
	}
	if len(paths) == 0 {
		return "", nil
	}
	backupID, err := rm.archive.BackupAll(ctx, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("deleting secrets of %s: backing up first, nothing deleted: %w", id, err)
	}
	for _, p := range paths {
		if err := rm.kv.remove(ctx, p); err != nil {
			return backupID, fmt.Errorf("deleting secrets of %s (%s): %w", id, heldBy(backupID), err)
		}
	}
	return backupID, nil
}
