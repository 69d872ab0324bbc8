package vault

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

// History keeps each instance's append-only history: one document per
// event under blacksmith/history/{id}/, never rewritten, pruned to a
// retention. A Store has one (Store.History).
type History struct {
	kv *kv
}

const (
	historyRoot = layoutRoot + "/history/"

	// MaxEventMessageBytes is the longest Event.Message kept; longer ones are
	// cut (at a character boundary) by AppendEvent.
	MaxEventMessageBytes = 1 << 10
	// MaxEventDetails is the most Event.Details entries (AppendEvent: ErrInvalid).
	MaxEventDetails = 32
	// MaxEventDetailBytes is the longest Details value kept; longer ones are
	// cut by AppendEvent.
	MaxEventDetailBytes = 256
	// MaxEventFieldBytes bounds Actor, RunID and Deployment (ErrInvalid).
	MaxEventFieldBytes = 128

	maxEventBytes = 64 << 10 // an event document read back, encoded
)

var (
	eventKind = regexp.MustCompile(`^[a-z_]{1,32}$`)
	detailKey = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

	// ErrEventNotRecorded means that a call did what it was asked to do but
	// could not append its event to the instance's history; the error wraps
	// the reason too.
	ErrEventNotRecorded = errors.New("done, but its history event was not recorded")
)

// Event is one entry of an instance's history, kept in its own document and
// never rewritten.
type Event struct {
	// Time is when it happened, in UTC; AppendEvent sets the zero time to now.
	Time time.Time `json:"time"`
	// Kind says what happened: created, updated, drift, orphaned, unorphaned,
	// quarantined, released (quarantine ended), conflict, restored,
	// redeployed, provision, update, deprovision, bind, unbind,
	// operation_settled, ... Any [a-z_]{1,32}.
	Kind string `json:"kind"`
	// Actor is who did it: "reconciler", "broker", "operator".
	Actor string `json:"actor,omitempty"`
	// RunID is the reconciler run that did it.
	RunID string `json:"run_id,omitempty"`
	// Deployment is the BOSH deployment concerned.
	Deployment string `json:"deployment,omitempty"`
	// Message is free text, cut at MaxEventMessageBytes.
	Message string `json:"message,omitempty"`
	// Details are at most MaxEventDetails entries; keys [A-Za-z0-9_.-]{1,64},
	// values cut at MaxEventDetailBytes.
	Details map[string]string `json:"details,omitempty"`
}

// HistoryOptions is the retention of PruneEvents.
type HistoryOptions struct {
	// Keep is how many of the newest events are kept. Default 0: all.
	Keep int
	// MaxAge deletes events older than it. Default 0: none for their age.
	MaxAge time.Duration
}

// eventName is the parsed name of an event document:
// {stamp}-{kind}-{4 hex digits}.
type eventName struct {
	time   time.Time
	kind   string
	suffix string
}

func (n eventName) String() string { return stamp(n.time) + "-" + n.kind + "-" + n.suffix }

// parseEventName accepts exactly the names that eventName.String writes.
func parseEventName(s string) (eventName, bool) {
	ts, rest, _ := strings.Cut(s, "-")
	kind, suffix, _ := strings.Cut(rest, "-")
	t, ok := parseStamp(ts)
	if !ok || !eventKind.MatchString(kind) || len(suffix) != 4 || strings.ToLower(suffix) != suffix {
		return eventName{}, false
	}
	if _, err := hex.DecodeString(suffix); err != nil {
		return eventName{}, false
	}
	return eventName{time: t, kind: kind, suffix: suffix}, true
}

// newerEvent orders event names newest first.
func newerEvent(a, b eventName) int {
	if c := b.time.Compare(a.time); c != 0 {
		return c
	}
	return cmp.Compare(b.String(), a.String())
}

func historyFolder(id string) string { return historyRoot + id + "/" }

// AppendEvent stores e as a new document of id's history at
// blacksmith/history/{id}/{time}-{kind}-{4 random hex digits}, never
// overwriting another (check-and-set "absent" on KV v2). A zero Time is now
// (later than every earlier zero-time event of the process); Message and
// Details values are cut at their bounds. A bad id, Kind, detail key, too
// many details or an over-long Actor, RunID or Deployment is refused
// (ErrInvalid) before anything is written.
func (h *History) AppendEvent(ctx context.Context, id string, e Event) error {
	if err := validID(id); err != nil {
		return err
	}
	e, err := e.normalized()
	if err != nil {
		return fmt.Errorf("appending to the history of %s: %w", id, err)
	}
	for attempt := 0; ; attempt++ {
		name := eventName{time: e.Time, kind: e.Kind, suffix: randomHex()}
		err = h.kv.write(ctx, historyFolder(id)+name.String(), e, 0)
		if !errors.Is(err, ErrConflict) || attempt == maxAttempts {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("appending to the history of %s: %w", id, err)
	}
	return nil
}

func randomHex() string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// normalized returns e as AppendEvent stores it, or why it cannot be.
func (e Event) normalized() (Event, error) {
	if e.Time.IsZero() {
		e.Time = now()
	}
	e.Time = e.Time.UTC()
	e.Message = textcut.Prefix(strings.ToValidUTF8(e.Message, "\uFFFD"), MaxEventMessageBytes)
	if e.Details != nil {
		d := make(map[string]string, len(e.Details))
		for k, v := range e.Details {
			d[k] = textcut.Prefix(strings.ToValidUTF8(v, "\uFFFD"), MaxEventDetailBytes)
		}
		e.Details = d
	}
	if err := stampable("event time", e.Time); err != nil {
		return Event{}, err
	}
	return e, e.check()
}

// check reports the first way e breaks the bounds of a stored event
// (ErrInvalid).
func (e *Event) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: event %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	switch {
	case !eventKind.MatchString(e.Kind):
		return bad("kind %q (want [a-z_]{1,32})", e.Kind)
	case e.Time.IsZero():
		return bad("without a time")
	case len(e.Message) > MaxEventMessageBytes:
		return bad("message of %d bytes (limit %d)", len(e.Message), MaxEventMessageBytes)
	case len(e.Details) > MaxEventDetails:
		return bad("with %d details (limit %d)", len(e.Details), MaxEventDetails)
	}
	for _, f := range [][2]string{{"actor", e.Actor}, {"run id", e.RunID}, {"deployment", e.Deployment}} {
		if len(f[1]) > MaxEventFieldBytes || !printable(f[1]) {
			return bad("%s %q (want at most %d printable bytes)", f[0], f[1], MaxEventFieldBytes)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.Details)) {
		if !detailKey.MatchString(k) || len(e.Details[k]) > MaxEventDetailBytes {
			return bad("detail %q (want a key [A-Za-z0-9_.-]{1,64} and at most %d bytes)", k, MaxEventDetailBytes)
		}
	}
	return nil
}

// decodeEvent decodes the event document data read at path, named name.
// Anything AppendEvent would not have written is ErrCorrupt naming path.
func decodeEvent(path string, name eventName, data map[string]json.RawMessage) (Event, error) {
	raw, err := bounded(path, data, maxEventBytes)
	if err != nil {
		return Event{}, err
	}
	var e Event
	if err := json.Unmarshal(raw, &e); err != nil {
		return Event{}, fmt.Errorf("event at %s: %w: %v", path, ErrCorrupt, err)
	}
	e.Time = e.Time.UTC()
	if err := e.check(); err != nil {
		return Event{}, fmt.Errorf("event at %s: %w: %v", path, ErrCorrupt, err)
	}
	if !e.Time.Equal(name.time) || e.Kind != name.kind {
		return Event{}, fmt.Errorf("event at %s: %w: holds %s at %s, unlike its name", path, ErrCorrupt, e.Kind, stamp(e.Time))
	}
	return e, nil
}

// Events returns id's history, newest first, at most limit events (0: all).
// Events of the same time come in an unspecified order. A document that
// cannot be used (a name this package does not write, a document that does
// not decode or is too large) is skipped: the events that could be read are
// returned with a *SkippedError naming every such path (errors.Is
// ErrCorrupt). A failed request to Vault returns no events.
func (h *History) Events(ctx context.Context, id string, limit int) ([]Event, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	names, skipped, err := h.eventNames(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading the history of %s: %w", id, err)
	}
	paths := make([]string, len(names))
	byPath := make(map[string]eventName, len(names))
	for i, n := range names {
		paths[i] = historyFolder(id) + n.String()
		byPath[h.kv.display(paths[i])] = n
	}
	decode := func(path string, data map[string]json.RawMessage) (Event, error) {
		return decodeEvent(path, byPath[path], data)
	}
	events, err := readNewest(ctx, h.kv, paths, limit, decode, skipped)
	if err != nil {
		return nil, fmt.Errorf("reading the history of %s: %w", id, err)
	}
	return events, skipped.err()
}

// LastEvent is when the newest event of the given kind was appended to
// id's history, from the events' names alone (one list, no event read);
// false when there is none. The broker tells an instance deleted by a
// deprovision from one that never was this way once its record is gone.
func (h *History) LastEvent(ctx context.Context, id, kind string) (time.Time, bool, error) {
	if err := validID(id); err != nil {
		return time.Time{}, false, err
	}
	names, _, err := h.eventNames(ctx, id)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("reading the history of %s: %w", id, err)
	}
	var last time.Time
	found := false
	for _, n := range names {
		if n.kind == kind && (!found || n.time.After(last)) {
			last, found = n.time, true
		}
	}
	return last, found, nil
}

// eventNames lists id's event documents, newest first; names that are not
// an event's are in the SkippedError.
func (h *History) eventNames(ctx context.Context, id string) ([]eventName, *SkippedError, error) {
	folder := historyFolder(id)
	keys, err := h.kv.list(ctx, folder)
	if err != nil {
		return nil, nil, err
	}
	skipped := &SkippedError{Folder: h.kv.display(folder)}
	var names []eventName
	for _, k := range keys {
		if n, ok := parseEventName(k); ok {
			names = append(names, n)
		} else {
			skipped.add(h.kv.display(folder+k), fmt.Errorf("%s: %w: not an event's name", h.kv.display(folder+k), ErrCorrupt))
		}
	}
	slices.SortFunc(names, newerEvent)
	return names, skipped, nil
}

// PruneEvents deletes, from id's history, the events beyond the newest
// opts.Keep and those older than opts.MaxAge at now (judged by the time in
// their names, without reading them), and returns how many it deleted. On
// KV v2 every version and the metadata of each go, so the space is freed.
// Documents whose names are not an event's are left alone.
func (h *History) PruneEvents(ctx context.Context, id string, opts HistoryOptions, now time.Time) (int, error) {
	if err := validID(id); err != nil {
		return 0, err
	}
	if opts.Keep < 0 || opts.MaxAge < 0 {
		return 0, fmt.Errorf("%w: history retention keep %d, max age %s", ErrInvalid, opts.Keep, opts.MaxAge)
	}
	names, _, err := h.eventNames(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("pruning the history of %s: %w", id, err)
	}
	var old []string
	for i, n := range names {
		if opts.Keep > 0 && i >= opts.Keep || opts.MaxAge > 0 && n.time.Before(now.Add(-opts.MaxAge)) {
			old = append(old, historyFolder(id)+n.String())
		}
	}
	n, err := removeEach(ctx, h.kv, old)
	if err != nil {
		return n, fmt.Errorf("pruning the history of %s: %w", id, err)
	}
	return n, nil
}

// HistoryInstances returns, sorted, the instance ids that have a history
// folder. Entries of blacksmith/history/ that are not the folder of a valid
// id are skipped and named in a *SkippedError returned with the ids.
func (h *History) HistoryInstances(ctx context.Context) ([]string, error) {
	keys, err := h.kv.list(ctx, historyRoot)
	if err != nil {
		return nil, fmt.Errorf("listing instance histories: %w", err)
	}
	skipped := &SkippedError{Folder: h.kv.display(historyRoot)}
	var ids []string
	for _, k := range keys {
		id, folder := strings.CutSuffix(k, "/")
		if !folder || validID(id) != nil {
			skipped.add(h.kv.display(historyRoot+k), fmt.Errorf("%s: %w: not an instance's history folder", h.kv.display(historyRoot+k), ErrCorrupt))
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, skipped.err()
}
