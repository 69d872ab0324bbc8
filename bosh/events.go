package bosh

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Event is one entry of the Director's event log (GET /events).
type Event struct {
	// ID is the Director's id, a decimal string; later events have larger
	// ids (compare them with IDBefore).
	ID string
	// ParentID is the start event of an end event ("" otherwise): a deploy
	// or delete records an event when it starts and another when it ends.
	ParentID string
	// Timestamp is when the event was recorded, in unix seconds.
	Timestamp int64
	// User is who made the change; Action what was done ("create",
	// "update", "delete", "acquire"...), to an object of ObjectType
	// ("deployment", "instance", "lock"...) named ObjectName; Task is the
	// id of the Director task that did it; Deployment and Instance are what
	// it concerns. Each is "" when the Director gives none.
	User, Action, ObjectType, ObjectName, Task, Deployment, Instance string
	// Error is the error an end event reports; "" when none.
	Error string
}

// EventQuery selects events; zero fields do not filter.
type EventQuery struct {
	// BeforeID selects only events older than this id (paging back: the id
	// of the oldest event of the previous page). It must be a decimal id.
	BeforeID string
	// Deployment selects the events of one deployment.
	Deployment string
	// ObjectType selects the events of one kind of object, e.g. "deployment".
	ObjectType string
	// Action selects one action, e.g. "update".
	Action string
	// AfterTime and BeforeTime select events by time. The Director compares
	// whole seconds: AfterTime selects from the second after it on (an event
	// in the same second is left out), BeforeTime the seconds before its own.
	AfterTime, BeforeTime time.Time
}

// EventsPage is the most events the Director answers at once.
const EventsPage = 200

// values is the query string of q, BeforeID already checked.
func (q EventQuery) values() url.Values {
	v := url.Values{}
	set := func(key, value string) {
		if value != "" {
			v.Set(key, value)
		}
	}
	set("before_id", q.BeforeID)
	set("deployment", q.Deployment)
	set("object_type", q.ObjectType)
	set("action", q.Action)
	if !q.AfterTime.IsZero() {
		v.Set("after_time", strconv.FormatInt(q.AfterTime.Unix(), 10))
	}
	if !q.BeforeTime.IsZero() {
		v.Set("before_time", strconv.FormatInt(q.BeforeTime.Unix(), 10))
	}
	return v
}

// Events returns one page of events, newest first (at most EventsPage).
// To page back, ask again with BeforeID set to the ID of the last event
// returned, until a page is empty. The answer is checked before it is
// returned: every id is a decimal id, the events are newest first and older
// than BeforeID, and there are at most EventsPage of them; a malformed
// answer is an error naming the event and what is wrong with it.
func (c *Client) Events(ctx context.Context, q EventQuery) ([]Event, error) {
	if q.BeforeID != "" && !validID(q.BeforeID) {
		return nil, fmt.Errorf("listing events: before id %s: %w", quote(q.BeforeID), errBadID)
	}
	var out []Event
	err := c.conn.getDecoded(ctx, request{path: "/events", query: q.values(), endpoint: epEvents}, func(body []byte) error {
		var err error
		out, err = parseEventPage(body, q.BeforeID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	return out, nil
}

// maxIDDigits bounds the length of an event id: ids of 20 digits go beyond
// what a 64-bit counter can reach.
const maxIDDigits = 20

// errBadID says what an event id must be.
var errBadID = errors.New("not a decimal id of 1 to 20 digits")

// validID says whether id is a decimal string of 1 to maxIDDigits digits.
func validID(id string) bool {
	if id == "" || len(id) > maxIDDigits {
		return false
	}
	for i := range len(id) {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return true
}

// IDBefore reports whether event id a is older than b (numeric comparison
// of the decimal ids; a malformed id is an error).
func IDBefore(a, b string) (bool, error) {
	for _, id := range []string{a, b} {
		if !validID(id) {
			return false, fmt.Errorf("comparing event ids: %s: %w", quote(id), errBadID)
		}
	}
	return idLess(a, b), nil
}

// idLess compares two valid ids as numbers, leading zeros ignored.
func idLess(a, b string) bool {
	a, b = trimZeros(a), trimZeros(b)
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func trimZeros(id string) string {
	if t := strings.TrimLeft(id, "0"); t != "" {
		return t
	}
	return "0"
}
