package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// RunLog keeps the reconciler's run log: one document per run, pruned to
// the newest ones. A Store has one (Store.RunLog).
type RunLog struct {
	kv *kv
}

const (
	runsRoot = layoutRoot + "/runs/"

	// MaxRunSummaryBytes bounds RunEntry.Summary (AppendRun: ErrTooLarge).
	MaxRunSummaryBytes = 256 << 10

	maxRunBytes = MaxRunSummaryBytes + 1<<10 // a run document read back, encoded
)

var runID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// RunEntry is one reconciler run in the run log.
type RunEntry struct {
	// ID is the run's id: [A-Za-z0-9_-]{1,64}.
	ID string `json:"run_id"`
	// StartedAt is when the run started; AppendRun sets the zero time to now.
	StartedAt time.Time `json:"started_at"`
	// Summary is the reconciler's own JSON for the run, at most
	// MaxRunSummaryBytes; empty is stored as null.
	Summary json.RawMessage `json:"summary"`
}

// runName is the parsed name of a run document: {stamp}-{run id}.
type runName struct {
	time time.Time
	id   string
}

func (n runName) String() string { return stamp(n.time) + "-" + n.id }

// parseRunName accepts exactly the names that runName.String writes.
func parseRunName(s string) (runName, bool) {
	ts, id, _ := strings.Cut(s, "-")
	t, ok := parseStamp(ts)
	if !ok || !runID.MatchString(id) {
		return runName{}, false
	}
	return runName{time: t, id: id}, true
}

// newerRun orders run names newest first.
func newerRun(a, b runName) int {
	if c := b.time.Compare(a.time); c != 0 {
		return c
	}
	return strings.Compare(b.id, a.id)
}

func validRunID(id string) error {
	if !runID.MatchString(id) {
		return fmt.Errorf("%w: run id %q (want [A-Za-z0-9_-]{1,64})", ErrInvalid, id)
	}
	return nil
}

// AppendRun stores e in the run log at blacksmith/runs/{started at}-{run
// id}. A zero StartedAt is now. A bad run id or a Summary that is not JSON
// is refused (ErrInvalid), a Summary over MaxRunSummaryBytes too
// (ErrTooLarge), before anything is written. Appending the same run (id and
// StartedAt) again replaces its entry.
func (l *RunLog) AppendRun(ctx context.Context, e RunEntry) error {
	if err := validRunID(e.ID); err != nil {
		return err
	}
	if e.StartedAt.IsZero() {
		e.StartedAt = now()
	}
	e.StartedAt = e.StartedAt.UTC()
	if err := stampable("run start", e.StartedAt); err != nil {
		return err
	}
	switch {
	case len(e.Summary) > MaxRunSummaryBytes:
		return fmt.Errorf("summary of run %s is %d bytes: %w (limit %d)", e.ID, len(e.Summary), ErrTooLarge, MaxRunSummaryBytes)
	case len(e.Summary) == 0:
		e.Summary = json.RawMessage("null")
	case !json.Valid(e.Summary):
		return fmt.Errorf("%w: summary of run %s is not JSON: %s", ErrInvalid, e.ID, snippet(e.Summary))
	}
	p := runsRoot + runName{time: e.StartedAt, id: e.ID}.String()
	if err := l.kv.write(ctx, p, e, noCAS); err != nil {
		return fmt.Errorf("logging run %s: %w", e.ID, err)
	}
	return nil
}

// decodeRun decodes the run document data read at path, named name.
// Anything AppendRun would not have written is ErrCorrupt naming path.
func decodeRun(path string, name runName, data map[string]json.RawMessage) (RunEntry, error) {
	raw, err := bounded(path, data, maxRunBytes)
	if err != nil {
		return RunEntry{}, err
	}
	var e RunEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return RunEntry{}, fmt.Errorf("run at %s: %w: %v", path, ErrCorrupt, err)
	}
	e.StartedAt = e.StartedAt.UTC()
	switch {
	case e.ID != name.id || !e.StartedAt.Equal(name.time):
		return RunEntry{}, fmt.Errorf("run at %s: %w: holds run %q started at %s, unlike its name", path, ErrCorrupt, e.ID, e.StartedAt)
	case len(e.Summary) > MaxRunSummaryBytes:
		return RunEntry{}, fmt.Errorf("run at %s: %w: %w: summary of %d bytes", path, ErrCorrupt, ErrTooLarge, len(e.Summary))
	}
	return e, nil
}

// Runs returns the run log, newest first, at most limit entries (0: all).
// Documents that cannot be used are skipped as Events skips them (the
// entries read come with a *SkippedError).
func (l *RunLog) Runs(ctx context.Context, limit int) ([]RunEntry, error) {
	if limit < 0 {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	names, skipped, err := l.runNames(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the run log: %w", err)
	}
	paths := make([]string, len(names))
	byPath := make(map[string]runName, len(names))
	for i, n := range names {
		paths[i] = runsRoot + n.String()
		byPath[l.kv.display(paths[i])] = n
	}
	decode := func(path string, data map[string]json.RawMessage) (RunEntry, error) {
		return decodeRun(path, byPath[path], data)
	}
	runs, err := readNewest(ctx, l.kv, paths, limit, decode, skipped)
	if err != nil {
		return nil, fmt.Errorf("reading the run log: %w", err)
	}
	return runs, skipped.err()
}

// runNames lists the run documents, newest first; names that are not a
// run's are in the SkippedError.
func (l *RunLog) runNames(ctx context.Context) ([]runName, *SkippedError, error) {
	keys, err := l.kv.list(ctx, runsRoot)
	if err != nil {
		return nil, nil, err
	}
	skipped := &SkippedError{Folder: l.kv.display(runsRoot)}
	var names []runName
	for _, k := range keys {
		if n, ok := parseRunName(k); ok {
			names = append(names, n)
		} else {
			skipped.add(l.kv.display(runsRoot+k), fmt.Errorf("%s: %w: not a run's name", l.kv.display(runsRoot+k), ErrCorrupt))
		}
	}
	slices.SortFunc(names, newerRun)
	return names, skipped, nil
}

// PruneRuns deletes the runs beyond the newest keep (0 keeps all) and
// returns how many it deleted (every version on KV v2). Documents whose
// names are not a run's are left alone.
func (l *RunLog) PruneRuns(ctx context.Context, keep int) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("%w: run log retention %d", ErrInvalid, keep)
	}
	names, _, err := l.runNames(ctx)
	if err != nil {
		return 0, fmt.Errorf("pruning the run log: %w", err)
	}
	if keep == 0 || len(names) <= keep {
		return 0, nil
	}
	old := make([]string, 0, len(names)-keep)
	for _, n := range names[keep:] {
		old = append(old, runsRoot+n.String())
	}
	n, err := removeEach(ctx, l.kv, old)
	if err != nil {
		return n, fmt.Errorf("pruning the run log: %w", err)
	}
	return n, nil
}
