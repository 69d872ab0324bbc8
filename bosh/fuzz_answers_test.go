package bosh

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cloudfoundry-community/gogobosh"
)

// Native Go fuzz targets for the parsers of the Director's answers. Each
// asserts an invariant beside "no panic"; run one with e.g.
//
//	go test ./bosh -run '^$' -fuzz '^FuzzParseAPIError$' -fuzztime 60s

// FuzzParseAPIError: an error answer, JSON or not, gives an APIError that
// keeps the status, matches the sentinels its status and code say, and
// carries at most maxErrorText bytes of valid UTF-8 taken from the start of
// the Director's description or of the body; re-encoded, it reads back the same.
func FuzzParseAPIError(f *testing.F) {
	for _, s := range []struct {
		status int
		body   string
	}{
		{404, seedErrorDeploymentNotFound}, {404, seedErrorTaskNotFound}, {401, seedErrorScope},
		{400, seedErrorMissingName}, {401, "Not authorized: '/deployments'\n"},
		{502, "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>\r\n"},
		{500, strings.Repeat("Zeitüberschreitung ", 40)},
		{400, `{"code":190024,"description":"` + strings.Repeat("é", 300) + `"}`},
	} {
		f.Add(s.status, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := parseAPIError("lab", "GET", "/deployments", status, body)
		if e.StatusCode != status || e.Director != "lab" {
			t.Fatalf("status %d and director %q not kept: %+v", status, "lab", e)
		}
		if len(e.Description) > maxErrorText {
			t.Fatalf("description of %d bytes, want at most %d", len(e.Description), maxErrorText)
		}
		if !utf8.ValidString(e.Description) {
			t.Fatalf("description %q is not UTF-8", e.Description)
		}
		if want := fmt.Sprintf(`bosh director "lab": GET /deployments: status %d`, status); !strings.HasPrefix(e.Error(), want) {
			t.Fatalf("Error() = %q, want prefix %q", e.Error(), want)
		}
		if errors.Is(e, ErrUnauthorized) != (status == http.StatusUnauthorized) ||
			errors.Is(e, ErrDeploymentNotFound) != (e.Code == CodeDeploymentNotFound) ||
			errors.Is(e, ErrTaskNotFound) != (e.Code == CodeTaskNotFound) {
			t.Fatalf("sentinels do not follow status %d and code %d", status, e.Code)
		}
		// The description is the start of the Director's description, or else of the body.
		var d struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		}
		source := strings.ToValidUTF8(strings.TrimSpace(string(body)), "\uFFFD")
		if json.Unmarshal(body, &d) == nil && (d.Code != 0 || d.Description != "") {
			source = d.Description
			if e.Code != d.Code {
				t.Fatalf("code %d, the body says %d", e.Code, d.Code)
			}
		}
		if !strings.HasPrefix(source, strings.TrimSuffix(e.Description, "...")) {
			t.Fatalf("description %q is not the start of %q", e.Description, source)
		}
		if e.Code == 0 && e.Description == "" {
			return
		}
		again, _ := json.Marshal(map[string]any{"code": e.Code, "description": e.Description})
		if r := parseAPIError("lab", "GET", "/deployments", status, again); r.Code != e.Code || r.Description != e.Description {
			t.Fatalf("re-encoded error reads back as %d %q, want %d %q", r.Code, r.Description, e.Code, e.Description)
		}
	})
}

// FuzzParseEvents: a task's event log gives one event per non-blank line,
// which re-encoded read back the same, or an error of bounded size naming
// the first line that does not decode.
func FuzzParseEvents(f *testing.F) {
	for _, s := range []string{
		seedEvents, seedEventError, seedEvents + seedEventError, "", "\n\n",
		strings.ReplaceAll(seedEvents, "\n", "\r\n"), strings.TrimSuffix(seedEvents, "\n"),
		seedEvents + "Task 4711 error\n", "null\n{}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		lines := bytes.Split(body, []byte("\n"))
		events, err := parseEvents(body)
		if err != nil {
			if len(err.Error()) > maxErrorText+100 {
				t.Fatalf("error of %d bytes: %.200s...", len(err.Error()), err)
			}
			var n int
			if _, scanErr := fmt.Sscanf(err.Error(), "decoding event line %d:", &n); scanErr != nil || n < 1 || n > len(lines) {
				t.Fatalf("error %q names no line of the %d", err, len(lines))
			}
			var e gogobosh.TaskEvent
			if json.Unmarshal(bytes.TrimSpace(lines[n-1]), &e) == nil {
				t.Fatalf("error %q names line %d, which decodes: %q", err, n, lines[n-1])
			}
			return
		}
		nonBlank := 0
		for _, l := range lines {
			if len(bytes.TrimSpace(l)) > 0 {
				nonBlank++
			}
		}
		if len(events) != nonBlank {
			t.Fatalf("%d events from %d non-blank lines", len(events), nonBlank)
		}
		var again bytes.Buffer
		for _, e := range events {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			again.Write(append(b, '\n'))
		}
		back, err := parseEvents(again.Bytes())
		if err != nil || !reflect.DeepEqual(back, events) {
			t.Fatalf("events do not read back: %v\n%+v\n%+v", err, back, events)
		}
	})
}

// vmWire is a VM as the Director writes it, vm_created_at in Unix seconds.
type vmWire struct {
	VM
	CreatedAt int64 `json:"vm_created_at"`
}

// FuzzDecodeVMs: a VM or instance listing that decodes reads back the same
// once re-encoded (vm_created_at as Unix seconds), a vm_created_at written
// as whole seconds is read exactly, and a decoding error is of bounded size.
func FuzzDecodeVMs(f *testing.F) {
	for _, s := range []string{
		seedVMs, seedInstances, "[]", "null",
		`[{"agent_id":"a","cid":"vm-1","job":"redis","index":2,"id":"i","az":"z1","ips":["10.0.0.1"],"vm_created_at":1751364612,"active":false}]`,
		`[{"vm_created_at":""},{"vm_created_at":null},{"vm_created_at":"2026-07-01T10:11:12+02:00"}]`,
		`[{"vm_created_at":9007199254740993},{"vm_created_at":1.7513646125e9},{"vm_created_at":-1e300}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var vms []VM
		if err := decodeJSON(body, &vms); boundedError(t, err) {
			var wire []vmWire // null stays null, [] stays []
			if vms != nil {
				wire = make([]vmWire, 0, len(vms))
			}
			for _, vm := range vms {
				wire = append(wire, vmWire{VM: vm, CreatedAt: vm.VMCreatedAt})
			}
			b, err := json.Marshal(wire)
			if err != nil {
				t.Fatal(err)
			}
			var back []VM
			if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, vms) {
				t.Fatalf("VMs do not read back: %v\n%+v\n%+v", err, back, vms)
			}
			checkCreatedAt(t, body, vms)
		}
		var instances []Instance
		if boundedError(t, decodeJSON(body, &instances)) {
			reencodes(t, instances)
		}
	})
}

// checkCreatedAt fails t unless each VM whose vm_created_at is written as
// a whole number of seconds that fits an int64 has exactly that time.
func checkCreatedAt(t *testing.T, body []byte, vms []VM) {
	t.Helper()
	var raw []map[string]json.RawMessage
	if json.Unmarshal(body, &raw) != nil || len(raw) != len(vms) {
		return
	}
	for i, fields := range raw {
		var value json.RawMessage
		for k, v := range fields {
			if strings.EqualFold(k, "vm_created_at") {
				if value != nil {
					value = nil // several spellings: which one wins is encoding/json's
					break
				}
				value = v
			}
		}
		if n, err := strconv.ParseInt(string(value), 10, 64); err == nil && vms[i].VMCreatedAt != n {
			t.Fatalf("vm_created_at %s read as %d", value, vms[i].VMCreatedAt)
		}
	}
}

// FuzzDecodeDeployments: a deployments listing that decodes reads back the
// same once re-encoded, and a decoding error is of bounded size.
func FuzzDecodeDeployments(f *testing.F) {
	for _, s := range []string{
		seedDeployments, seedDeploymentsExcluded, "[]", "null",
		`[{"name":"redis-small-0003a787-febc-4fb6-bc25-104c33bd8755","teams":[],"releases":[{"name":"redis","version":"16.1.0"}],"locked":false}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var list []Deployment
		if boundedError(t, decodeJSON(body, &list)) {
			reencodes(t, list)
		}
	})
}

// FuzzDecodeUploads: a releases or stemcells listing that decodes reads
// back the same once re-encoded, and a decoding error is of bounded size.
func FuzzDecodeUploads(f *testing.F) {
	for _, s := range []string{
		seedReleases, seedStemcells, "[]", "null",
		`[{"name":"redis","release_versions":[]}]`,
		`[{"name":"s","operating_system":"ubuntu-jammy","version":"1.506","cid":"c","cpi":"","deployments":[],"api_version":null,"id":1}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var releases []Release
		if boundedError(t, decodeJSON(body, &releases)) {
			reencodes(t, releases)
		}
		var stemcells []Stemcell
		if boundedError(t, decodeJSON(body, &stemcells)) {
			reencodes(t, stemcells)
		}
	})
}

// FuzzDecodeTasks: a task or a task listing that decodes reads back the same
// once re-encoded, Terminal follows the state, and a decoding error is of
// bounded size.
func FuzzDecodeTasks(f *testing.F) {
	for _, s := range []string{seedTasks, seedTaskDone, seedTaskError, seedTaskQueued, "[]", "null"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var task Task
		if boundedError(t, decodeJSON(body, &task)) {
			reencodes(t, task)
			if task.Terminal() != (task.State == TaskDone || task.State == TaskError ||
				task.State == TaskCancelled || task.State == TaskTimeout) {
				t.Fatalf("Terminal() = %v for state %q", task.Terminal(), task.State)
			}
		}
		var tasks []Task
		if boundedError(t, decodeJSON(body, &tasks)) {
			reencodes(t, tasks)
		}
	})
}

// FuzzTaskID: a task redirect gives a positive id that its Location names,
// only for a 302 or 303; anything else gives errNotTaskRedirect, quoting at
// most maxErrorText bytes of the Location.
func FuzzTaskID(f *testing.F) {
	for _, s := range []struct {
		status   int
		location string
	}{
		{302, "https://127.0.0.2:25555/tasks/4711"}, {302, "https://director.bosh.invalid:25555/tasks/12"},
		{303, "/tasks/7"}, {200, "/tasks/7"}, {302, "https://127.0.0.2:25555/deployments/x"},
		{302, "/tasks/abc"}, {302, "/tasks/" + strings.Repeat("9", 30)}, {302, "%zz" + strings.Repeat("x", 900)},
	} {
		f.Add(s.status, s.location)
	}
	f.Fuzz(func(t *testing.T, status int, location string) {
		h := http.Header{}
		h.Set("Location", location)
		id, err := taskID(response{status: status, header: h})
		if err != nil {
			if !errors.Is(err, errNotTaskRedirect) || id != 0 {
				t.Fatalf("taskID(%d, %q) = %d, %v", status, location, id, err)
			}
			if len(err.Error()) > maxErrorText+100 {
				t.Fatalf("error of %d bytes for a Location of %d", len(err.Error()), len(location))
			}
			return
		}
		if id <= 0 || (status != http.StatusFound && status != http.StatusSeeOther) {
			t.Fatalf("taskID(%d, %q) = %d, want an error", status, location, id)
		}
		if !strings.Contains(location, fmt.Sprint(id)) && !strings.Contains(location, "%") {
			t.Fatalf("id %d read from %q, which does not name it", id, location)
		}
	})
}

// boundedError reports whether err is nil, and fails t when it is longer
// than an APIError's description may be.
func boundedError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil && len(err.Error()) > maxErrorText {
		t.Fatalf("decoding error of %d bytes: %.200s...", len(err.Error()), err)
	}
	return err == nil
}

// reencodes fails t unless v, encoded to JSON, decodes to v again.
func reencodes[T any](t *testing.T, v T) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, v) {
		t.Fatalf("%T does not read back: %v\n%+v\n%+v", v, err, back, v)
	}
}

// FuzzParseVMStates: a vm-state task's result, whatever its lines, gives at
// most one state a non-blank line or an error naming the line; a state is
// Running only when its job and every process run.
func FuzzParseVMStates(f *testing.F) {
	for _, s := range []string{
		seedVMStatesFull,
		`{"id":"a","job_state":"unresponsive agent","processes":[],"vitals":null}` + "\n\n",
		`{"id":"a","job_state":"running","processes":[{"name":"x","state":"failing"}]}`,
		"not json\n", `{"processes":"nope"}`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		states, err := parseVMStates(body)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error %q names no line", err)
			}
			return
		}
		lines := 0
		for l := range bytes.Lines(body) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if len(states) != lines {
			t.Fatalf("%d states from %d lines", len(states), lines)
		}
		for _, s := range states {
			running := s.JobState == JobRunning
			for _, p := range s.Processes {
				running = running && p.State == JobRunning
			}
			if s.Running() != running {
				t.Fatalf("Running() = %v for %+v", s.Running(), s)
			}
		}
	})
}

// FuzzParseErrandResults: whatever an errand task's result output holds,
// reading it does not panic; what it reads is one result per non-blank
// line, which re-encoded reads back the same; an error is of bounded size.
func FuzzParseErrandResults(f *testing.F) {
	for _, s := range []string{
		`{"instance":{"group":"smoke-tests","id":"7"},"errand_name":"smoke-tests","exit_code":1,"stdout":"a","stderr":"b","logs":{"blobstore_id":"x","sha1":"y"}}` + "\n",
		"", "\n\n", "null\n{}\n", "Task 4711 done\n", `{"exit_code":"one"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		results, err := ParseErrandResults(body)
		if err != nil {
			if len(err.Error()) > maxErrorText+100 {
				t.Fatalf("error of %d bytes: %.200s...", len(err.Error()), err)
			}
			return
		}
		nonBlank := 0
		for l := range bytes.Lines(body) {
			if len(bytes.TrimSpace(l)) > 0 {
				nonBlank++
			}
		}
		if len(results) != nonBlank {
			t.Fatalf("%d results from %d non-blank lines", len(results), nonBlank)
		}
		var again bytes.Buffer
		for _, r := range results {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			again.Write(append(b, '\n'))
		}
		back, err := ParseErrandResults(again.Bytes())
		if err != nil || !reflect.DeepEqual(back, results) {
			t.Fatalf("results do not read back: %v\n%+v\n%+v", err, back, results)
		}
	})
}
