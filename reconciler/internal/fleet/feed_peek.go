package fleet

import (
	"context"
	"fmt"
	"strconv"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// peekTasks is how many of a Director's newest tasks a peek reads.
const peekTasks = 100

// Peek looks, without moving a mark, whether any Director's feeds say
// something changed since the last complete run read them: an event after
// its event mark, a task newer than the newest it read, or the task it
// stopped its task mark before (the oldest one running then) ended. It
// costs each Director at most two requests (an event page, a page of
// tasks) and one read of its feed state; a Director no run read yet is
// left to the next run. It returns a line per Director that changed, and
// the errors of those that could not be looked at (joined into one line
// each, never a change).
func (d *Directors) Peek(ctx context.Context, store memory.StateStore) (changed []string, errs []error) {
	for _, m := range d.members {
		why, err := m.peek(ctx, store)
		switch {
		case err != nil:
			errs = append(errs, m.failed("", err))
		case why != "":
			changed = append(changed, m.Name+": "+why)
		}
	}
	return changed, errs
}

// peek is Peek of one Director: why it changed, "" when nothing did.
func (m member) peek(ctx context.Context, store memory.StateStore) (string, error) {
	var st feedState
	if _, err := store.ReadState(ctx, m.feedDoc, &st); err != nil {
		return "", fmt.Errorf("reading the feed state: %w", err)
	}
	if st.LastID == "" { // no run read this feed yet
		return "", nil
	}
	events, err := m.Director.Events(ctx, bosh.EventQuery{})
	if err != nil {
		return "", fmt.Errorf("reading the Director's events: %w", err)
	}
	if len(events) > 0 && events[0].ID != st.LastID {
		if st.LastID == emptyLog {
			return "event " + cutQuote(events[0].ID) + " in a log that was empty", nil
		}
		if newer, err := bosh.IDBefore(st.LastID, events[0].ID); err != nil || newer {
			return "event " + cutQuote(events[0].ID) + " after the mark", nil
		}
	}
	if m.Tasks == nil {
		return "", nil
	}
	tasks, err := m.Tasks.Tasks(ctx, bosh.TaskQuery{Limit: peekTasks})
	if err != nil {
		return "", fmt.Errorf("reading the Director's tasks: %w", err)
	}
	if len(tasks) == 0 {
		return "", nil
	}
	seen := max(st.SeenTaskID, st.LastTaskID)
	switch newest := tasks[0].ID; {
	case newest > seen:
		return fmt.Sprintf("task %d is new", newest), nil
	case newest < st.LastTaskID:
		return fmt.Sprintf("task ids went back (%d, the mark %d)", newest, st.LastTaskID), nil
	}
	for _, t := range tasks {
		if t.ID == st.LastTaskID+1 && t.ID <= seen && t.Terminal() {
			return fmt.Sprintf("task %d ended", t.ID), nil
		}
	}
	return "", nil
}

// cutQuote is an event id as a reason quotes it: a Director's content,
// cut to 64 bytes.
func cutQuote(id string) string { return strconv.Quote(report.Truncate(id, 64)) }
