package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// maxSecretPaths bounds the paths (secrets and folders) listed under one
// instance for a backup: the backup document must stay a size Vault accepts.
const maxSecretPaths = 1000

// stateReader reads what a backup holds of an instance (its state): the
// index record, metadata, manifest and secrets.
type stateReader struct {
	kv         *kv
	docs       *indexDocs
	backupPath string // BackupOptions.Path: the backups are none of the instance's secrets
}

// state is what a backup holds of an instance, as read; nil marks an absent
// part.
type state struct {
	record   json.RawMessage
	metadata json.RawMessage
	manifest json.RawMessage            // the JSON string
	secrets  map[string]json.RawMessage // path relative to the mount -> data; nil: not read
}

// readState reads the index record, metadata and manifest of id and, when
// secrets is set, every secret under {id}/ (see secretPaths); with docs
// (nil: none; its Manifest set), the metadata and manifest are taken from
// it (metadata that was not read is read), and the record too when it
// holds one. also (nil: none) is read alongside.
func (sr *stateReader) readState(ctx context.Context, id string, secrets bool, docs *InstanceDocs, also func(context.Context) error) (*state, error) {
	st := &state{}
	// The parts are read at once: a backup is taken before every change of
	// an instance, and reading them one after another made it most of the
	// change's time.
	g, gctx := errgroup.WithContext(ctx)
	if docs != nil && docs.Record != nil {
		var err error
		if st.record, err = json.Marshal(docs.Record); err != nil {
			return nil, fmt.Errorf("encoding the record of %s: %w", id, err)
		}
	} else {
		g.Go(func() (err error) {
			st.record, _, err = sr.docs.recordRaw(gctx, id)
			return err
		})
	}
	if also != nil {
		g.Go(func() error { return also(gctx) })
	}
	if docs != nil && (docs.Metadata == nil || docs.Metadata.raw != nil) {
		st.metadata = docs.Metadata.rawOrNil()
	} else {
		g.Go(func() error {
			md, err := sr.kv.read(gctx, metadataPath(id))
			if err != nil || !md.Exists {
				return err
			}
			st.metadata, err = json.Marshal(md.Data)
			return err
		})
	}
	if docs != nil {
		st.manifest = docs.Manifest.raw()
	} else {
		g.Go(func() error {
			mf, err := sr.kv.read(gctx, manifestPath(id))
			if err == nil {
				st.manifest = mf.Data["manifest"]
			}
			return err
		})
	}
	if secrets {
		g.Go(func() (err error) {
			st.secrets, err = sr.readSecrets(gctx, id)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return st, nil
}

// empty reports whether there is nothing to back up.
func (st *state) empty() bool {
	return st.record == nil && st.metadata == nil && st.manifest == nil && len(st.secrets) == 0
}

// document is the backup document of st.
func (st *state) document(id string) map[string]json.RawMessage {
	doc := map[string]json.RawMessage{}
	for k, v := range map[string]json.RawMessage{"record": st.record, "metadata": st.metadata, "manifest": st.manifest} {
		if v != nil {
			doc[k] = v
		}
	}
	if st.secrets != nil {
		doc["secrets"] = encodeEntries(st.secrets)
	}
	doc["instance_id"], _ = json.Marshal(id)
	doc["taken_at"], _ = json.Marshal(time.Now().UTC().Format(time.RFC3339Nano))
	return doc
}

// readSecrets reads every secret under {id}/ with bounded parallelism.
func (sr *stateReader) readSecrets(ctx context.Context, id string) (map[string]json.RawMessage, error) {
	paths, err := sr.secretPaths(ctx, id)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	out := make(map[string]json.RawMessage, len(paths))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readParallelism)
	for _, p := range paths {
		g.Go(func() error {
			doc, err := sr.kv.read(gctx, p)
			if err != nil || !doc.Exists {
				return err
			}
			raw, err := json.Marshal(doc.Data)
			mu.Lock()
			out[p] = raw
			mu.Unlock()
			return err
		})
	}
	return out, g.Wait()
}

// secretPaths lists, recursively and sorted, the paths of the secrets under
// {id}/ but the instance's metadata, manifest and backups (and the index, for
// an instance named like its folder). Past maxSecretPaths listed paths it
// fails with ErrTooLarge.
func (sr *stateReader) secretPaths(ctx context.Context, id string) ([]string, error) {
	var out []string
	listed := 0
	for folders := []string{id + "/"}; len(folders) > 0; folders = folders[1:] {
		keys, err := sr.kv.list(ctx, folders[0])
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if listed++; listed > maxSecretPaths {
				return nil, fmt.Errorf("%w: more than %d paths under %s (delete some, then try again)",
					ErrTooLarge, maxSecretPaths, sr.kv.display(id+"/"))
			}
			if !validKey(k) {
				return nil, fmt.Errorf("listing %s: %w: key %q", sr.kv.display(folders[0]), ErrCorrupt, k)
			}
			p := folders[0] + k
			switch {
			case sr.reserved(id, p) || isIndexPath(p):
			case strings.HasSuffix(p, "/"):
				folders = append(folders, p)
			default:
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// validKey accepts a name that LIST may return: one path segment, a folder
// when it ends in "/".
func validKey(k string) bool {
	k = strings.TrimSuffix(k, "/")
	return k != "" && k != "." && k != ".." && !strings.Contains(k, "/") && printable(k)
}

// reserved reports whether p (a path or folder under {id}/) is the
// instance's metadata, manifest, backups folder or a backup: none of them is
// one of its secrets.
func (sr *stateReader) reserved(id, p string) bool {
	return reservedPath(id, sr.backupPath, p)
}

func reservedPath(id, backupPath, p string) bool {
	rel, folder := strings.CutSuffix(strings.TrimPrefix(p, id+"/"), "/")
	if !folder && (rel == "metadata" || rel == "manifest") {
		return true
	}
	return rel == backupPath || strings.HasPrefix(rel, backupPath+"/")
}

// isIndexPath reports whether p (a path or folder) is one of the index's.
func isIndexPath(p string) bool {
	return p == LegacyIndexPath || p == metaPath || strings.HasPrefix(p, "blacksmith/index/")
}

// instanceSecret checks that p names one of id's secrets: under {id}/, not
// its metadata, manifest or backups (ErrInvalid otherwise).
func instanceSecret(id, backupPath, p string) error {
	if err := writablePath(p); err != nil {
		return err
	}
	if !strings.HasPrefix(p, id+"/") || reservedPath(id, backupPath, p) {
		return fmt.Errorf("%w: %q is not a secret of instance %s", ErrInvalid, p, id)
	}
	return nil
}
