package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzAppCreate: whatever the body, POST /v3/apps does not panic and
// answers 201 with a named app in a known space, or 400/422 with a CF error.
func FuzzAppCreate(f *testing.F) {
	f.Add(`{"name":"web","relationships":{"space":{"data":{"guid":"s1"}}}}`)
	f.Add(`{"name":7,"relationships":{"space":{"data":null}},"x":1}`)
	f.Add(`{"name":"","relationships":[]}`)
	f.Add(`[1,2]`)
	f.Fuzz(func(t *testing.T, body string) {
		fd := newFoundation()
		org := fd.AddOrg("o")
		sp, _ := fd.AddSpace(org.GUID, "s")
		body = strings.ReplaceAll(body, "s1", sp.GUID)
		ar := &appRoutes{f: fd, api: &api{f: fd, url: "http://127.0.0.1:1"}}
		w := httptest.NewRecorder()
		ar.create(w, httptest.NewRequest(http.MethodPost, "/v3/apps", strings.NewReader(body)))
		switch w.Code {
		case http.StatusCreated:
			var a appJSON
			if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || a.Relationships == nil || strings.TrimSpace(a.Name) == "" {
				t.Fatalf("201 for %q: %s", body, w.Body)
			}
		case http.StatusBadRequest, http.StatusUnprocessableEntity:
			if !strings.Contains(w.Body.String(), `"errors"`) {
				t.Fatalf("%d without errors for %q: %s", w.Code, body, w.Body)
			}
		default:
			t.Fatalf("status %d for %q", w.Code, body)
		}
	})
}

// FuzzKeyMessage: whatever the JSON, reading it as a credential binding
// create body does not panic, and a body it accepts names its instance
// (and, for type app, its app).
func FuzzKeyMessage(f *testing.F) {
	f.Add(`{"type":"app","relationships":{"service_instance":{"data":{"guid":"i"}},"app":{"data":{"guid":"a"}}}}`)
	f.Add(`{"type":"key","name":"k","parameters":[1],"relationships":{"app":7}}`)
	f.Add(`{"type":null,"relationships":{"service_instance":{"data":[]}}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var body map[string]any
		if json.Unmarshal([]byte(raw), &body) != nil {
			return
		}
		m := readKeyMessage(body)
		if len(m.problems) == 0 && (m.instance == "" || (m.kind == "app" && m.app == "") || (m.kind != "app" && m.kind != "key")) {
			t.Fatalf("accepted %q as %+v", raw, m)
		}
	})
}
