package bosh

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// eventWire is an Event as the Director writes it, empty fields left out.
type eventWire struct {
	ID         string `json:"id"`
	ParentID   string `json:"parent_id,omitempty"`
	Timestamp  int64  `json:"timestamp"`
	User       string `json:"user,omitempty"`
	Action     string `json:"action,omitempty"`
	ObjectType string `json:"object_type,omitempty"`
	ObjectName string `json:"object_name,omitempty"`
	Task       string `json:"task,omitempty"`
	Deployment string `json:"deployment,omitempty"`
	Instance   string `json:"instance,omitempty"`
	Error      string `json:"error,omitempty"`
}

// FuzzParseEventPage: a page of GET /events, whatever the Director sends,
// gives an error of bounded size naming what is wrong, or at most
// EventsPage events with decimal ids, strictly newest first and older than
// before_id, which re-encoded as the Director writes them read back the same.
func FuzzParseEventPage(f *testing.F) {
	for _, s := range []struct{ body, beforeID string }{
		{seedEventPage, ""}, {seedEventPage, "4128"}, {seedEventPage, "4127"}, {"[]", "1"}, {"null", ""},
		{`[{"id":"2","parent_id":"1","timestamp":1,"context":{"before":{},"after":{}}},{"id":"1","timestamp":0}]`, ""},
		{`[{"id":"12a","timestamp":1}]`, ""}, {`[{"id":9,"timestamp":1}]`, ""}, {`[{"id":"9","timestamp":"1"}]`, ""},
		{`[{"id":"9","timestamp":1.5,"user":1}]`, ""}, {`[{"id":"` + strings.Repeat("9", 21) + `","timestamp":1}]`, ""},
		{`[{"id":"8","timestamp":1},{"id":"9","timestamp":1}]`, ""}, {`[{"id":"9","timestamp":1,"error":"` + strings.Repeat("é", 600) + `"}]`, ""},
		{`{"code":100}`, ""}, {`[[],{}]`, ""}, {`[{"ID":"9","Timestamp":1}]`, ""},
	} {
		f.Add([]byte(s.body), s.beforeID)
	}
	f.Fuzz(func(t *testing.T, body []byte, beforeID string) {
		if beforeID != "" && !validID(beforeID) {
			beforeID = "" // Events refuses it before asking
		}
		events, err := parseEventPage(body, beforeID)
		if err != nil {
			if len(err.Error()) > 2*maxErrorText+200 {
				t.Fatalf("error of %d bytes: %.200s...", len(err.Error()), err)
			}
			if events != nil {
				t.Fatalf("events beside error %v", err)
			}
			return
		}
		if !json.Valid(body) || len(events) > EventsPage {
			t.Fatalf("%d events read from an answer that is not a page", len(events))
		}
		for i, e := range events {
			if !validID(e.ID) || (e.ParentID != "" && !validID(e.ParentID)) {
				t.Fatalf("event %d has ids %q and %q", i+1, e.ID, e.ParentID)
			}
			prev := beforeID
			if i > 0 {
				prev = events[i-1].ID
			}
			if prev == "" {
				continue
			}
			if before, err := IDBefore(e.ID, prev); err != nil || !before {
				t.Fatalf("event %d (id %s) is not older than %s", i+1, e.ID, prev)
			}
		}
		wire := make([]eventWire, len(events))
		for i, e := range events {
			wire[i] = eventWire(e)
		}
		again, err := json.Marshal(wire)
		if err != nil {
			t.Fatal(err)
		}
		back, err := parseEventPage(again, beforeID)
		if err != nil || !reflect.DeepEqual(back, events) {
			t.Fatalf("events do not read back: %v\n%+v\n%+v", err, back, events)
		}
	})
}
