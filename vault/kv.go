package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/vault/api"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// kv reads and writes documents of one KV mount, hiding the differences
// between versions 1 and 2. Paths are relative to the mount.
type kv struct {
	client  *api.Client
	mount   string
	version int
	reads   atomic.Uint64
	checks  atomic.Uint64 // of the reads, metadata reads (current)
	writes  atomic.Uint64
	byKind  [len(WriteKinds)]atomic.Uint64 // writes, by the kind of document
	fo      *failover                      // rides out a cluster's failover (nil: never)
}

// WriteKinds are the kinds of documents Stats.WritesByKind counts writes
// of: the index (layout and shards), an instance's metadata and manifest,
// its secrets, its backups, the history, the run log, the reconciler's
// state documents, and the rest (leases, the legacy db, ...).
var WriteKinds = [...]string{"index", "instance", "secret", "backup", "history", "runlog", "state", "other"}

// kindOf is the index in WriteKinds of the document at p.
func kindOf(p string) int {
	switch {
	case strings.HasPrefix(p, "blacksmith/index/"):
		return 0
	case strings.HasPrefix(p, "blacksmith/history/"):
		return 4
	case strings.HasPrefix(p, "blacksmith/runs/"):
		return 5
	case strings.HasPrefix(p, "blacksmith/state/"):
		return 6
	case strings.HasPrefix(p, "blacksmith/") || p == LegacyIndexPath:
		return 7
	}
	_, rest, _ := strings.Cut(p, "/")
	switch {
	case rest == "metadata" || rest == "manifest":
		return 1
	case strings.HasPrefix(rest, "backups/"):
		return 3
	case rest == "":
		return 7
	}
	return 2
}

// document is one secret as read: its data (nil when absent) and, on KV v2,
// the current version (0 when it was never written), for check-and-set,
// and that version's created_time as Vault wrote it (raw JSON, "" when
// absent): a version number alone does not name one content, since a
// document whose metadata was deleted starts again at version 1.
type document struct {
	Data    map[string]json.RawMessage
	Version int
	Exists  bool
	Created string
}

// noCAS asks write for an unconditional write.
const noCAS = -1

func (k *kv) dataPath(p string) string {
	if k.version == 2 {
		return k.mount + "/data/" + p
	}
	return k.mount + "/" + p
}

func (k *kv) metadataPath(p string) string { return k.mount + "/metadata/" + p }

// display is the path as a user names it: mount and relative path.
func (k *kv) display(p string) string { return k.mount + "/" + p }

// read returns the document at p. Absent is not an error; a failed request,
// a body that cannot be decoded, or a 404 that does not mean "absent" (no
// such mount, a mount of the other KV version) is, and the document is then
// unusable.
func (k *kv) read(ctx context.Context, p string) (document, error) {
	k.reads.Add(1)
	raw, found, err := k.get(ctx, k.dataPath(p), nil)
	var doc document
	switch {
	case err != nil:
	case found:
		doc, err = k.decode(raw)
	default:
		doc, err = k.absent(raw)
	}
	if err != nil {
		return document{}, fmt.Errorf("reading %s: %w", k.display(p), err)
	}
	return doc, nil
}

// get sends a GET for target and returns the whole body of a 200 (found) or
// 404 answer; any other answer is an error.
func (k *kv) get(ctx context.Context, target string, params url.Values) ([]byte, bool, error) {
	resp, err := k.fo.call(ctx, func() (*api.Response, error) {
		return k.client.Logical().ReadRawWithDataWithContext(ctx, target, params)
	})
	if resp != nil {
		defer resp.Body.Close()
	}
	if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
		return nil, false, k.classify(ctx, err)
	}
	raw, err := readBody(resp.Body, resp.ContentLength)
	if err != nil {
		return nil, false, fmt.Errorf("%w: reading response: %w", ErrUnreachable, err)
	}
	return raw, resp.StatusCode != http.StatusNotFound, nil
}

// readBody reads a whole body into a buffer of its announced length (n, -1
// unknown): io.ReadAll grows its buffer from 512 bytes by half again each
// time, so that a shard of 25 KB cost ~60 KB in copies, and the buffer it
// ends with, up to half empty, stays alive as long as the records split
// from it (a cold run's index write holds every shard it read).
func readBody(r io.Reader, n int64) ([]byte, error) {
	if n <= 0 || n > 8<<20 { // a larger answer, announced or not, grows as it comes
		return io.ReadAll(r)
	}
	buf := make([]byte, n, n+1) // one byte more to see the end in, without a buffer of its own
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	switch m, err := io.ReadFull(r, buf[n:n+1]); {
	case m == 1: // longer than announced: keep it whole
		rest, err := io.ReadAll(r)
		return append(buf[:n+1], rest...), err
	case err != io.EOF:
		return nil, err
	}
	return buf[:n:n], nil
}

type v1Body struct {
	Data map[string]json.RawMessage `json:"data"`
}

type v2Body struct {
	Data *struct {
		Data     map[string]json.RawMessage `json:"data"`
		Metadata struct {
			Version int             `json:"version"`
			Created json.RawMessage `json:"created_time"`
		} `json:"metadata"`
	} `json:"data"`
}

// decode parses a 200 response body. A body that is not what Vault sends for
// a secret is an error: the caller must not act on a half-understood read.
func (k *kv) decode(raw []byte) (document, error) {
	if k.version == 1 {
		var b v1Body
		if err := json.Unmarshal(raw, &b); err != nil || b.Data == nil {
			return document{}, fmt.Errorf("%w: unparseable response: %s", ErrCorrupt, snippet(raw))
		}
		return document{Data: b.Data, Exists: true}, nil
	}
	if doc, ok := decodeV2(raw); ok {
		return doc, nil
	}
	var b v2Body
	if err := json.Unmarshal(raw, &b); err != nil || b.Data == nil || b.Data.Metadata.Version == 0 {
		return document{}, fmt.Errorf("%w: unparseable response: %s", ErrCorrupt, snippet(raw))
	}
	doc := document{Data: b.Data.Data, Version: b.Data.Metadata.Version, Exists: b.Data.Data != nil,
		Created: string(b.Data.Metadata.Created)}
	return doc, nil
}

// decodeV2 is decode's fast path for a KV v2 answer as Vault writes it: one
// validation of the whole, then each layer split (json.Unmarshal scanned a
// shard's answer several times over, at every run's index read). false
// for anything else (keys in another case, a key twice, a version that is
// not a plain number, no data): json.Unmarshal then decides.
func decodeV2(raw []byte) (document, bool) {
	top, dup, ok := split(raw, true) // validates the whole once
	if !ok || dup || oddKeys(top, "data") {
		return document{}, false
	}
	data, dup, ok := splitValid(top["data"])
	if !ok || dup || oddKeys(data, "data", "metadata") {
		return document{}, false
	}
	meta, dup, ok := splitValid(data["metadata"])
	if !ok || dup || oddKeys(meta, "version", "created_time") {
		return document{}, false
	}
	v := string(meta["version"])
	version, err := strconv.Atoi(v)
	if err != nil || version <= 0 || strconv.Itoa(version) != v {
		return document{}, false
	}
	doc := document{Version: version, Created: string(meta["created_time"])}
	switch entries := data["data"]; {
	case entries == nil || string(entries) == "null":
	default:
		if doc.Data, dup, ok = splitValid(entries); !ok || dup {
			return document{}, false
		}
		doc.Exists = true
	}
	return doc, true
}

// oddKeys says whether m has a key that json.Unmarshal would take for one
// of names (it matches keys without regard to case) but is not it.
func oddKeys(m map[string]json.RawMessage, names ...string) bool {
	for k := range m {
		for _, n := range names {
			if k != n && strings.EqualFold(k, n) {
				return true
			}
		}
	}
	return false
}

// absent reads a 404 body. Vault says "absent" with no error and no warning
// (on KV v2 with the version of a deleted secret, which a check-and-set
// write must name). Anything else (no handler for the route, a warning that
// the path is not one of a versioned mount, a body that is not Vault's)
// means the path is not served as the configured mount: treating it as
// absent would show an empty index.
func (k *kv) absent(raw []byte) (document, error) {
	var b struct {
		v2Body
		Errors   []string `json:"errors"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return document{}, fmt.Errorf("%w: a 404 that is not from vault: %s", ErrInvalid, snippet(raw))
	}
	if msgs := append(b.Errors, b.Warnings...); len(msgs) > 0 {
		return document{}, fmt.Errorf("%w: vault answered 404 %q: is %s a KV v%d mount?",
			ErrInvalid, strings.Join(msgs, "; "), k.mount, k.version)
	}
	if k.version == 2 && b.Data != nil {
		return document{Version: b.Data.Metadata.Version}, nil
	}
	return document{}, nil
}

// write stores data (a json.RawMessage is sent as is) at p. With KV v2 and cas >= 0 the write only succeeds if
// the current version is cas (0: only if absent); ErrConflict otherwise. KV v1
// ignores cas.
func (k *kv) write(ctx context.Context, p string, data any, cas int) error {
	raw, ok := data.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			return fmt.Errorf("encoding %s: %w", k.display(p), err)
		}
	}
	if k.version == 1 {
		if string(raw) == "{}" { // Vault answers a bare 400 "missing data fields"
			return fmt.Errorf("writing %s: %w: KV v1 cannot store an empty document", k.display(p), ErrInvalid)
		}
		return k.put(ctx, p, raw, cas)
	}
	body := make([]byte, 0, len(raw)+40)
	body = append(body, `{"data":`...)
	body = append(body, raw...)
	if cas >= 0 {
		body = append(body, `,"options":{"cas":`...)
		body = strconv.AppendInt(body, int64(cas), 10)
		body = append(body, '}')
	}
	return k.put(ctx, p, append(body, '}'), cas)
}

// cas is the check-and-set version of a write after a read of version:
// version on KV v2, none on KV v1.
func (k *kv) cas(version int) int {
	if k.version == 1 {
		return noCAS
	}
	return version
}

// maxCASAttempts bounds the tries of one read-modify-write (update) whose
// check-and-set keeps losing to other writers of the document.
const maxCASAttempts = 10

// update reads the document at p, passes it to change and writes what change
// returns (nil: nothing). On KV v2 the write is a check-and-set on the
// version read: when another writer wrote p in between, update reads it again
// and calls change again, so that what the other wrote is kept, up to
// maxCASAttempts times (then ErrConflict). change may be called several
// times and must not have side effects. KV v1 has no check-and-set: a read
// and a write, the last writer wins.
func (k *kv) update(ctx context.Context, p string, change func(doc document) (any, error)) error {
	for attempt := 1; ; attempt++ {
		doc, err := k.read(ctx, p)
		if err != nil {
			return err
		}
		data, err := change(doc)
		if err != nil || data == nil {
			return err
		}
		cas := noCAS
		if k.version == 2 {
			cas = doc.Version
		}
		err = k.write(ctx, p, data, cas)
		if !errors.Is(err, ErrConflict) || attempt == maxCASAttempts {
			return err
		}
		if err := retry.Sleep(ctx, conflictBackoff.Delay(attempt)); err != nil {
			return err
		}
	}
}

func (k *kv) put(ctx context.Context, p string, body []byte, cas int) error {
	k.writes.Add(1)
	k.byKind[kindOf(p)].Add(1)
	resp, err := k.fo.call(ctx, func() (*api.Response, error) {
		return k.client.Logical().WriteRawWithContext(ctx, k.dataPath(p), body)
	})
	drain(resp)
	if err == nil {
		return nil
	}
	var re *api.ResponseError
	if k.version == 2 && cas >= 0 && errors.As(err, &re) && re.StatusCode == http.StatusBadRequest {
		// Vault says 400 for a check-and-set mismatch, without a code: look
		// at the version to tell a conflict from a bad request.
		if cur, rerr := k.read(ctx, p); rerr == nil && cur.Version != cas {
			if cur.Version == cas+1 && ownWrite(body, cur.Data) {
				return nil // its own write, committed before its answer was lost in a failover
			}
			return fmt.Errorf("writing %s (cas %d, now %d): %w", k.display(p), cas, cur.Version, ErrConflict)
		}
	}
	return fmt.Errorf("writing %s: %w", k.display(p), k.classify(ctx, err))
}

// boundVersions makes KV v2 keep at most max versions of the document at p
// (its metadata's max_versions; p need not exist yet). KV v1 keeps one:
// nothing to do.
func (k *kv) boundVersions(ctx context.Context, p string, max int) error {
	if k.version != 2 {
		return nil
	}
	k.writes.Add(1)
	k.byKind[kindOf(p)].Add(1)
	body := []byte(`{"max_versions":` + strconv.Itoa(max) + `}`)
	resp, err := k.fo.call(ctx, func() (*api.Response, error) {
		return k.client.Logical().WriteRawWithContext(ctx, k.metadataPath(p), body)
	})
	drain(resp)
	if err != nil {
		return fmt.Errorf("bounding the versions of %s: %w", k.display(p), k.classify(ctx, err))
	}
	return nil
}

// remove deletes p; on KV v2 every version and the metadata go.
func (k *kv) remove(ctx context.Context, p string) error {
	k.writes.Add(1)
	k.byKind[kindOf(p)].Add(1)
	target := k.dataPath(p)
	if k.version == 2 {
		target = k.metadataPath(p)
	}
	resp, err := k.fo.call(ctx, func() (*api.Response, error) {
		return k.client.Logical().DeleteRawWithContext(ctx, target)
	})
	drain(resp)
	if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
		return fmt.Errorf("deleting %s: %w", k.display(p), k.classify(ctx, err))
	}
	return nil
}
