package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// Documents are each instance's own documents: its metadata, its manifest
// and the allowance an operator gave it (allowance.go, kept as a secret of
// the instance), and the list of the instances that have documents
// (Instances). A Store has them (Store.Documents).
type Documents struct {
	kv      *kv
	opts    *Options
	secrets *Secrets // the allowances
}

// maxString is the longest string Vault's listener accepts by default.
const maxString = 1 << 20

func metadataPath(id string) string { return id + "/metadata" }
func manifestPath(id string) string { return id + "/manifest" }

// Metadata returns the metadata of id, or nil, nil when there is none. A
// document whose known fields have unexpected types is an error naming its
// path (matching ErrCorrupt); it is left untouched.
func (ds *Documents) Metadata(ctx context.Context, id string) (*Metadata, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	doc, err := ds.kv.read(ctx, metadataPath(id))
	if err != nil || !doc.Exists {
		return nil, err
	}
	return ds.decodeMetadata(metadataPath(id), doc)
}

// decodeMetadata decodes the metadata document doc read at p.
func (ds *Documents) decodeMetadata(p string, doc document) (*Metadata, error) {
	raw, err := json.Marshal(doc.Data)
	if err != nil {
		return nil, err
	}
	var md Metadata
	extra, mismatch, err := decodeObject(raw, md.fields())
	if err != nil {
		return nil, fmt.Errorf("metadata at %s: %w", ds.kv.display(p), err)
	}
	if len(mismatch) > 0 {
		return nil, fmt.Errorf("metadata at %s: %w: fields %v have unexpected JSON types",
			ds.kv.display(p), ErrCorrupt, mismatch)
	}
	md.Extra = extra
	md.version, md.raw = doc.Version, raw
	return &md, nil
}

// PutMetadata writes md as the metadata of id, with its history capped at
// Options.HistoryCap entries. md is written as given (Extra included). When
// md is (a copy of) metadata that Metadata read, on KV v2 the write is a
// check-and-set on the version read: a document another writer changed since
// is left as it is and the answer is ErrConflict (read again, change again).
// Metadata that was not read is written unconditionally. A writer that keeps
// what others wrote without a read of its own calls UpdateMetadata.
func (ds *Documents) PutMetadata(ctx context.Context, id string, md *Metadata) error {
	if err := validID(id); err != nil {
		return err
	}
	raw, err := ds.encodeMetadata(id, md)
	if err != nil {
		return err
	}
	cas := noCAS
	if md != nil && md.version > 0 && ds.kv.version == 2 {
		cas = md.version
	}
	return ds.kv.write(ctx, metadataPath(id), raw, cas)
}

// UpdateMetadata changes the metadata of id: change gets a private copy of
// the current metadata (nil when there is none) and returns what to write
// (nil: nothing), its history capped at Options.HistoryCap entries. On KV v2
// the write is a check-and-set on the version read: when another writer
// changed the document in between, change is called again on what that
// writer left, up to 10 times (then ErrConflict), so that concurrent
// writers, on one daemon or several, lose none of each other's keys. change
// must not have side effects. A current document that does not decode is
// ErrCorrupt, left untouched. On KV v1 it is a read and a write (the last
// writer wins).
func (ds *Documents) UpdateMetadata(ctx context.Context, id string, change func(cur *Metadata) (*Metadata, error)) error {
	if err := validID(id); err != nil {
		return err
	}
	p := metadataPath(id)
	err := ds.kv.update(ctx, p, func(doc document) (any, error) {
		var cur *Metadata
		if doc.Exists {
			var err error
			if cur, err = ds.decodeMetadata(p, doc); err != nil {
				return nil, err
			}
		}
		next, err := change(cur)
		if err != nil || next == nil {
			return nil, err
		}
		return ds.encodeMetadata(id, next)
	})
	if err != nil {
		return fmt.Errorf("updating the metadata of %s: %w", id, err)
	}
	return nil
}

// encodeMetadata encodes md, its history capped at Options.HistoryCap.
func (ds *Documents) encodeMetadata(id string, md *Metadata) (json.RawMessage, error) {
	if md == nil {
		return nil, fmt.Errorf("%w: nil metadata for %s", ErrInvalid, id)
	}
	capped := *md
	capped.History = capHistory(md.History, ds.opts.HistoryCap)
	raw, err := json.Marshal(capped)
	if err != nil {
		return nil, fmt.Errorf("encoding the metadata of %s: %w", id, err)
	}
	return raw, nil
}

// Manifest returns the manifest text of id and whether there is one.
func (ds *Documents) Manifest(ctx context.Context, id string) (string, bool, error) {
	if err := validID(id); err != nil {
		return "", false, err
	}
	p := manifestPath(id)
	doc, err := ds.kv.read(ctx, p)
	if err != nil || !doc.Exists {
		return "", false, err
	}
	var text string
	if err := json.Unmarshal(doc.Data["manifest"], &text); err != nil {
		return "", false, fmt.Errorf("manifest at %s: %w: key \"manifest\" is not a string", ds.kv.display(p), ErrCorrupt)
	}
	return text, true, nil
}

// PutManifest stores text as the manifest of id, keeping any other keys of
// the document: a read and, on KV v2, a check-and-set write on the version
// read, tried again (up to 10 times, then ErrConflict) when another writer
// wrote the document in between, so that no key another writer added is
// lost. A manifest over Options.MaxManifestBytes (default 1 MiB, the longest
// string Vault's listener accepts) is refused, unwritten (ErrTooLarge).
func (ds *Documents) PutManifest(ctx context.Context, id, text string) error {
	if err := ds.checkManifest(id, text); err != nil {
		return err
	}
	b, _ := json.Marshal(text)
	err := ds.kv.update(ctx, manifestPath(id), func(doc document) (any, error) {
		data := maps.Clone(doc.Data)
		if data == nil {
			data = map[string]json.RawMessage{}
		}
		data["manifest"] = b
		return data, nil
	})
	if err != nil {
		return fmt.Errorf("writing the manifest of %s: %w", id, err)
	}
	return nil
}

// ManifestDoc is an instance's manifest document as ReadManifest read it:
// its text (when it Exists), and what ReplaceManifest keeps of it (its
// other keys and, on KV v2, its version).
type ManifestDoc struct {
	Text   string
	Exists bool

	data    map[string]json.RawMessage
	version int
}

// raw is the manifest's JSON string as read, nil when there was none.
func (m *ManifestDoc) raw() json.RawMessage {
	if !m.Exists {
		return nil
	}
	return m.data["manifest"]
}

// ReadManifest reads the manifest document of id (Exists false when there
// is none), for a ReplaceManifest over it that costs no second read.
func (ds *Documents) ReadManifest(ctx context.Context, id string) (*ManifestDoc, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	p := manifestPath(id)
	doc, err := ds.kv.read(ctx, p)
	if err != nil {
		return nil, err
	}
	md := &ManifestDoc{Exists: doc.Exists, data: doc.Data, version: doc.Version}
	if doc.Exists {
		if err := json.Unmarshal(doc.Data["manifest"], &md.Text); err != nil {
			return nil, fmt.Errorf("manifest at %s: %w: key \"manifest\" is not a string", ds.kv.display(p), ErrCorrupt)
		}
	}
	return md, nil
}

// ReplaceManifest writes text as the manifest of id over what ReadManifest
// read (over), keeping its other keys. On KV v2 the write is a
// check-and-set on the version read: ErrConflict when another writer wrote
// the document since (read it again). On KV v1 it is written as read (the
// last writer wins). A manifest over Options.MaxManifestBytes is refused,
// unwritten (ErrTooLarge).
func (ds *Documents) ReplaceManifest(ctx context.Context, id, text string, over *ManifestDoc) error {
	if err := ds.checkManifest(id, text); err != nil {
		return err
	}
	if over == nil {
		return fmt.Errorf("%w: replacing the manifest of %s over nothing read", ErrInvalid, id)
	}
	b, _ := json.Marshal(text)
	data := maps.Clone(over.data)
	if !over.Exists || data == nil {
		data = map[string]json.RawMessage{}
	}
	data["manifest"] = b
	if err := ds.kv.write(ctx, manifestPath(id), data, ds.kv.cas(over.version)); err != nil {
		return fmt.Errorf("writing the manifest of %s: %w", id, err)
	}
	return nil
}

// CreateManifest writes the manifest of an instance that has none. On KV v2
// the write is check-and-set "absent", so it costs no read: ErrConflict means
// a manifest exists (call PutManifest, which keeps its other keys). On KV v1
// it is PutManifest.
func (ds *Documents) CreateManifest(ctx context.Context, id, text string) error {
	if ds.kv.version == 1 {
		return ds.PutManifest(ctx, id, text)
	}
	if err := ds.checkManifest(id, text); err != nil {
		return err
	}
	b, _ := json.Marshal(text)
	data := map[string]json.RawMessage{"manifest": b}
	if err := ds.kv.write(ctx, manifestPath(id), data, 0); err != nil {
		return fmt.Errorf("creating the manifest of %s: %w", id, err)
	}
	return nil
}

// checkManifest refuses a bad id, or a manifest longer than the bound.
func (ds *Documents) checkManifest(id, text string) error {
	if err := validID(id); err != nil {
		return err
	}
	if len(text) > ds.opts.MaxManifestBytes {
		return fmt.Errorf("manifest of %s is %d bytes: %w (limit %d)", id, len(text), ErrTooLarge, ds.opts.MaxManifestBytes)
	}
	return nil
}

// Instances returns the ids that have documents of their own under the mount
// (manifest, metadata, backups, secrets), in one LIST of the mount's top
// level. An id it does not name had none when it was listed, so a cold
// reconcile need not read that instance's records one by one.
func (ds *Documents) Instances(ctx context.Context) (map[string]bool, error) {
	names, err := ds.kv.list(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("listing instances: %w", err)
	}
	ids := make(map[string]bool, len(names))
	for _, n := range names {
		id, folder := strings.CutSuffix(n, "/")
		if folder && validID(id) == nil && id != layoutRoot {
			ids[id] = true
		}
	}
	return ids, nil
}
