package bosh

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// parseEventPage reads an answer of GET /events, which the client does not
// trust: a JSON array of at most EventsPage objects, newest first, each
// with a decimal id (older than beforeID when it is set), a timestamp in
// whole seconds, and strings or nulls in its other known fields. Unknown
// fields, context among them, are ignored. An error names the event (its
// position from 1, and its id once read) and what is wrong with it.
func parseEventPage(body []byte, beforeID string) ([]Event, error) {
	var raw []json.RawMessage
	if err := decodeJSON(body, &raw); err != nil {
		return nil, fmt.Errorf("not a JSON array of events: %w", err)
	}
	if len(raw) > EventsPage {
		return nil, fmt.Errorf("%d events, more than the %d the Director answers at once", len(raw), EventsPage)
	}
	out := make([]Event, 0, len(raw))
	for i, r := range raw {
		e, err := parseEvent(r)
		if err != nil {
			return nil, fmt.Errorf("event %d%s: %w", i+1, idNote(e.ID), err)
		}
		switch {
		case i > 0 && !idLess(e.ID, out[i-1].ID):
			return nil, fmt.Errorf("event %d (id %s) is not older than event %d (id %s): the Director answers newest first",
				i+1, e.ID, i, out[i-1].ID)
		case i == 0 && beforeID != "" && !idLess(e.ID, beforeID):
			return nil, fmt.Errorf("event 1 (id %s) is not older than before_id %s", e.ID, beforeID)
		}
		out = append(out, e)
	}
	return out, nil
}

// idNote is " (id N)" once an event's id was read, "" before.
func idNote(id string) string {
	if id == "" {
		return ""
	}
	return " (id " + id + ")"
}

// stringSlot is a string field of an event and its JSON key.
type stringSlot struct {
	key string
	to  *string
}

// eventStrings are the string fields of e.
func eventStrings(e *Event) []stringSlot {
	return []stringSlot{
		{"user", &e.User}, {"action", &e.Action}, {"object_type", &e.ObjectType}, {"object_name", &e.ObjectName},
		{"task", &e.Task}, {"deployment", &e.Deployment}, {"instance", &e.Instance}, {"error", &e.Error},
	}
}

// parseEvent reads one event; on error, the Event has the id when it was read.
func parseEvent(r json.RawMessage) (Event, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(r, &fields) != nil || fields == nil {
		return Event{}, fmt.Errorf("is %s, not a JSON object", kindOf(r))
	}
	var e Event
	id, err := stringField(fields, "id")
	switch {
	case err != nil:
		return e, err
	case id == "":
		return e, fmt.Errorf("has no id")
	case !validID(id):
		return e, fmt.Errorf("id %s: %w", quote(id), errBadID)
	}
	e.ID = id
	if e.ParentID, err = stringField(fields, "parent_id"); err != nil {
		return e, err
	}
	if e.ParentID != "" && !validID(e.ParentID) {
		return e, fmt.Errorf("parent_id %s: %w", quote(e.ParentID), errBadID)
	}
	if e.Timestamp, err = timestampField(fields); err != nil {
		return e, err
	}
	for _, f := range eventStrings(&e) {
		if *f.to, err = stringField(fields, f.key); err != nil {
			return e, err
		}
	}
	return e, nil
}

// stringField reads a string field; absent or null is "".
func stringField(fields map[string]json.RawMessage, key string) (string, error) {
	r, ok := fields[key]
	if !ok || string(r) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(r, &s) != nil {
		return "", fmt.Errorf("%s is %s, not a string", key, kindOf(r))
	}
	return s, nil
}

// timestampField reads the timestamp, a whole number of unix seconds.
func timestampField(fields map[string]json.RawMessage) (int64, error) {
	r, ok := fields["timestamp"]
	if !ok || string(r) == "null" {
		return 0, fmt.Errorf("has no timestamp")
	}
	if kindOf(r) != "a number" {
		return 0, fmt.Errorf("timestamp is %s, not a number", kindOf(r))
	}
	ts, err := strconv.ParseInt(string(r), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp %s is not a whole number of seconds", quote(string(r)))
	}
	return ts, nil
}

// kindOf names the JSON type of a valid JSON value.
func kindOf(r json.RawMessage) string {
	if len(r) == 0 {
		return "empty"
	}
	switch r[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
