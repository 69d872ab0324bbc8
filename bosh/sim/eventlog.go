package sim

import (
	"encoding/json"
	"slices"
)

// eventsPage is the most events GET /events answers.
const eventsPage = 200

// event is a Director event. An empty string or a zero stands for the
// Director's null: GET /events leaves such fields out.
type event struct {
	id, parent int64 // parent: the start event of an end event
	at         int64 // unix nanoseconds
	task       int

	user, action, objectType, objectName string
	deployment, instance, err            string
	context                              json.RawMessage
}

// parentRef is an event with a parent, in the eventLog's sliding minimum.
type parentRef struct{ id, parent int64 }

// eventLog holds the newest events, oldest first, guarded by store.mu.
// Ids are consecutive: live()[i].id == live()[0].id+i.
type eventLog struct {
	buf    []event // buf[head:] are the events kept; pruning moves head
	head   int
	lastID int64
	kept   int // how many events pruning keeps (Options.EventsKept)
	// parents are the events with a parent among the newest kept ones, by
	// increasing id and increasing parent: its first is the oldest parent
	// that pruning must keep.
	parents []parentRef
}

// live are the events kept, oldest first.
func (l *eventLog) live() []event { return l.buf[l.head:] }

// add records e with the next id, prunes, and returns the id.
func (l *eventLog) add(e event) int64 {
	l.lastID++
	e.id = l.lastID
	if len(l.buf) == cap(l.buf) && l.head >= len(l.buf)/2 { // reuse the room pruning freed
		n := copy(l.buf, l.live())
		clear(l.buf[n:])
		l.buf, l.head = l.buf[:n], 0
	}
	l.buf = append(l.buf, e)
	if e.parent != 0 {
		n := len(l.parents)
		for n > 0 && l.parents[n-1].parent >= e.parent {
			n--
		}
		l.parents = append(l.parents[:n], parentRef{e.id, e.parent})
	}
	l.prune()
	return e.id
}

// prune drops the oldest events beyond the newest kept, as the Director's
// scheduled cleanup does: it also keeps every event from the oldest start
// event that one of the kept end events names as its parent.
func (l *eventLog) prune() {
	events := l.live()
	over := len(events) - l.kept
	if over <= 0 {
		return
	}
	cut := events[over].id // the oldest of the newest kept
	for len(l.parents) > 0 && l.parents[0].id < cut {
		l.parents = l.parents[1:]
	}
	if len(l.parents) > 0 && l.parents[0].parent < cut {
		cut = max(l.parents[0].parent, events[0].id)
	}
	dropped := int(cut - events[0].id)
	clear(events[:dropped]) // their texts can be collected
	l.head += dropped
}

// grow makes room for n more events (at most the number kept), so that
// recording many at once does not copy the log again and again.
func (l *eventLog) grow(n int) {
	l.buf = slices.Grow(l.buf, min(n, l.kept))
}

// setKept changes how many events are kept, pruning at once.
func (l *eventLog) setKept(n int) {
	l.kept = n
	l.prune()
}

// before is the position of the newest event older than id, -1 when none.
func (l *eventLog) before(id int64) int {
	events := l.live()
	if len(events) == 0 || id <= events[0].id {
		return -1
	}
	return int(min(id-events[0].id, int64(len(events)))) - 1
}

// list returns up to eventsPage events f selects, newest first.
func (l *eventLog) list(f eventFilter) []eventView {
	out := []eventView{}
	events := l.live()
	i := len(events) - 1
	if f.beforeID != nil {
		i = l.before(*f.beforeID)
	}
	for ; i >= 0 && len(out) < eventsPage; i-- {
		if e := &events[i]; f.matches(e) {
			out = append(out, e.view())
		}
	}
	return out
}
