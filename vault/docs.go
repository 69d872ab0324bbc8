package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// State keeps the reconciler's own state documents (the quarantine, the
// event feeds' marks) under blacksmith/state/. A Store has one (Store.State).
type State struct {
	kv *kv
}

// The package's own documents besides the index, under layoutRoot:
//
//	blacksmith/history/{id}/{stamp}-{kind}-{hex4}   one Event each (history.go)
//	blacksmith/runs/{stamp}-{run id}                one RunEntry each (runlog.go)
//	blacksmith/state/{name}                         {"value": ..., "updated_at": ...} (here)
//
// {stamp} is a UTC time with fixed-width nanoseconds, so names sort in time
// order. Every one of them is read as untrusted: bounded, decoded without
// panics, and a bad one is reported with its path, never fatal for others.
const (
	stateRoot   = layoutRoot + "/state/"
	stampLayout = "20060102T150405.000000000Z"
	readWindow  = 64 // documents read per round by readNewest

	// MaxStateBytes bounds the JSON encoding of one state value (WriteState:
	// ErrTooLarge; ReadState: ErrCorrupt).
	MaxStateBytes = 256 << 10
)

var stateName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// validStateName accepts the names of state documents: [a-z0-9_-]{1,64}.
func validStateName(name string) error {
	if !stateName.MatchString(name) {
		return fmt.Errorf("%w: state name %q (want [a-z0-9_-]{1,64})", ErrInvalid, name)
	}
	return nil
}

// ReadState decodes the state document name (blacksmith/state/{name}) into
// v, a non-nil pointer, and reports whether it exists. v is set only when
// the document exists and decodes (into a fresh value, not merged into what
// v held). A document that does not decode into v, or whose value is over
// MaxStateBytes, is ErrCorrupt naming its path.
func (st *State) ReadState(ctx context.Context, name string, v any) (bool, error) {
	if err := validStateName(name); err != nil {
		return false, err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false, fmt.Errorf("%w: reading state %s into %T (want a non-nil pointer)", ErrInvalid, name, v)
	}
	p := stateRoot + name
	doc, err := st.kv.read(ctx, p)
	if err != nil || !doc.Exists {
		return false, err
	}
	fresh := reflect.New(rv.Elem().Type())
	if err := decodeState(st.kv.display(p), doc.Data, fresh.Interface()); err != nil {
		return false, err
	}
	rv.Elem().Set(fresh.Elem())
	return true, nil
}

// decodeState decodes the value of the state document data, read at path,
// into v.
func decodeState(path string, data map[string]json.RawMessage, v any) error {
	raw, ok := data["value"]
	switch {
	case !ok:
		return fmt.Errorf("state at %s: %w: no \"value\" key", path, ErrCorrupt)
	case len(raw) > MaxStateBytes:
		return fmt.Errorf("state at %s: %w: %w: value is %d bytes (limit %d)", path, ErrCorrupt, ErrTooLarge, len(raw), MaxStateBytes)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("state at %s: %w: %v", path, ErrCorrupt, err)
	}
	return nil
}

// WriteState stores v, encoded as JSON, as the state document name,
// replacing what was there (last writer wins, on KV v2 too). A value whose
// encoding is over MaxStateBytes is refused, unwritten (ErrTooLarge).
func (st *State) WriteState(ctx context.Context, name string, v any) error {
	if err := validStateName(name); err != nil {
		return err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: encoding state %s: %v", ErrInvalid, name, err)
	}
	if len(raw) > MaxStateBytes {
		return fmt.Errorf("state %s is %d bytes: %w (limit %d)", name, len(raw), ErrTooLarge, MaxStateBytes)
	}
	at, _ := json.Marshal(time.Now().UTC().Format(time.RFC3339Nano))
	doc := map[string]json.RawMessage{"value": raw, "updated_at": at}
	if err := st.kv.write(ctx, stateRoot+name, doc, noCAS); err != nil {
		return fmt.Errorf("writing state %s: %w", name, err)
	}
	return nil
}

// stamp formats t (in UTC) as the sortable time of a document name.
func stamp(t time.Time) string { return t.UTC().Format(stampLayout) }

// parseStamp parses a time formatted by stamp, and only such a time.
func parseStamp(s string) (time.Time, bool) {
	if len(s) != len(stampLayout) {
		return time.Time{}, false
	}
	t, err := time.Parse(stampLayout, s)
	if err != nil || stamp(t) != s {
		return time.Time{}, false
	}
	return t, true
}

// stampable refuses a time that a name cannot hold (before year 1 or after
// 9999, where fixed-width names stop sorting in time order).
func stampable(what string, t time.Time) error {
	if _, ok := parseStamp(stamp(t)); !ok {
		return fmt.Errorf("%w: %s %s is out of range", ErrInvalid, what, t)
	}
	return nil
}

// lastNow is the newest time handed out by now, in Unix nanoseconds.
var lastNow atomic.Int64

// now returns the current UTC time, later than every earlier call in the
// process, so that documents named from it sort in the order of the calls.
func now() time.Time {
	for {
		last, t := lastNow.Load(), time.Now().UnixNano()
		if t <= last {
			t = last + 1
		}
		if lastNow.CompareAndSwap(last, t) {
			return time.Unix(0, t).UTC()
		}
	}
}

// SkippedError reports the documents that a listing call skipped because
// they could not be used: names that are not the package's, documents that
// do not decode or are over their bound. The call returns what it could
// read alongside it. It matches ErrCorrupt with errors.Is.
type SkippedError struct {
	// Folder is the folder listed, including the mount.
	Folder string
	// Paths are the documents skipped, including the mount, in the order met.
	Paths []string
	// Errs say what is wrong with each, in the same order.
	Errs []error
}

// Error implements error.
func (e *SkippedError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("%d documents under %s skipped: %s", len(e.Paths), e.Folder, strings.Join(msgs, "; "))
}

// Unwrap lets errors.Is(err, ErrCorrupt) match.
func (e *SkippedError) Unwrap() []error { return append([]error{ErrCorrupt}, e.Errs...) }

// add records that the document at path was skipped for err.
func (e *SkippedError) add(path string, err error) {
	e.Paths = append(e.Paths, path)
	e.Errs = append(e.Errs, err)
}

// err returns e, or nil when nothing was skipped.
func (e *SkippedError) err() error {
	if len(e.Paths) == 0 {
		return nil
	}
	return e
}

// bounded encodes the document data read at path, refusing more than limit
// bytes (ErrCorrupt and ErrTooLarge).
func bounded(path string, data map[string]json.RawMessage, limit int) ([]byte, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("document at %s: %w: %v", path, ErrCorrupt, err)
	}
	if len(raw) > limit {
		return nil, fmt.Errorf("document at %s: %w: %w: %d bytes (limit %d)", path, ErrCorrupt, ErrTooLarge, len(raw), limit)
	}
	return raw, nil
}

// readNewest reads the documents at paths (relative to the mount, in the
// order wanted), a window at a time in parallel, and decodes each until want
// are decoded (0: all). A document absent since it was listed is passed
// over; one that does not decode is added to skipped. A failed read is
// returned, with nothing else.
func readNewest[T any](ctx context.Context, k *kv, paths []string, want int,
	decode func(path string, data map[string]json.RawMessage) (T, error), skipped *SkippedError) ([]T, error) {
	var out []T
	for start := 0; start < len(paths) && (want == 0 || len(out) < want); {
		n := readWindow
		if want > 0 {
			n = min(n, want-len(out))
		}
		batch := paths[start:min(start+n, len(paths))]
		start += len(batch)
		docs := make([]document, len(batch))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(readParallelism)
		for i, p := range batch {
			g.Go(func() (err error) {
				docs[i], err = k.read(gctx, p)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		for i, doc := range docs {
			if !doc.Exists {
				continue
			}
			v, err := decode(k.display(batch[i]), doc.Data)
			if err != nil {
				skipped.add(k.display(batch[i]), err)
				continue
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// removeEach deletes the documents at paths (every version on KV v2), a
// few at a time, and returns how many it deleted; it stops at the first
// failure.
func removeEach(ctx context.Context, k *kv, paths []string) (int, error) {
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readParallelism)
	for _, p := range paths {
		g.Go(func() error {
			if err := k.remove(gctx, p); err != nil {
				return err
			}
			done.Add(1)
			return nil
		})
	}
	err := g.Wait()
	return int(done.Load()), err
}
