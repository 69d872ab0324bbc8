package cf

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseJob: any answer gives a job with a guid, a known state and
// bounded, valid UTF-8 texts (at most maxJobErrors errors), or an error;
// never a panic.
func FuzzParseJob(f *testing.F) {
	for _, s := range []string{
		`{"guid":"j1","operation":"service_broker.catalog.synchronize","state":"COMPLETE","errors":[],"warnings":[]}`,
		`{"guid":"j1","operation":"service_instance.delete","state":"FAILED","errors":[{"code":10009,"title":"CF-UnableToPerform","detail":"` + strings.Repeat("x", 900) + `"}]}`,
		`{"guid":"j1","state":"PROCESSING"}`, `{"guid":"","state":"COMPLETE"}`, `{"guid":"j","state":"DONE"}`,
		`{"guid":1}`, `null`, `[]`, "\xff", `{"guid":"j","state":"FAILED","errors":[` + strings.Repeat(`{"code":1},`, 40) + `{}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		j, err := ParseJob(body)
		if err != nil {
			if len(err.Error()) > 3*maxErrorText {
				t.Fatalf("error %d bytes", len(err.Error()))
			}
			return
		}
		if j.GUID == "" || (j.State != JobProcessing && j.State != JobPolling && j.State != JobComplete && j.State != JobFailed) {
			t.Fatalf("accepted %+v", j)
		}
		if len(j.Errors) > maxJobErrors {
			t.Fatalf("%d errors kept", len(j.Errors))
		}
		for _, e := range append([]JobErrorEntry{{Title: j.GUID, Detail: j.Operation}}, j.Errors...) {
			for _, s := range []string{e.Title, e.Detail} {
				if len(s) > maxErrorText || !utf8.ValidString(s) {
					t.Fatalf("text %q unbounded or not UTF-8", s)
				}
			}
		}
		if j.State == JobFailed && !errors.Is(&JobError{Job: j}, ErrJobFailed) {
			t.Fatal("a failed job's error does not match ErrJobFailed")
		}
	})
}

// FuzzParseVisibility: any answer gives a visibility of a known type with
// bounded, sorted orgs that all have a guid, or an error; never a panic.
func FuzzParseVisibility(f *testing.F) {
	for _, s := range []string{
		`{"type":"public"}`, `{"type":"admin"}`, `{"type":"space","space":{"guid":"s","name":"n"}}`,
		`{"type":"organization","organizations":[{"guid":"b","name":"beta"},{"guid":"a","name":"alpha"}]}`,
		`{"type":"organization","organizations":[{"name":"no guid"}]}`, `{"type":"everyone"}`, `{"type":7}`, `null`, "\xfe",
		`{"type":"organization","organizations":[{"guid":"` + strings.Repeat("é", 400) + `"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := ParseVisibility(body)
		if err != nil {
			return
		}
		switch v.Type {
		case VisibilityPublic, VisibilityAdmin, VisibilityOrganization, VisibilitySpace:
		default:
			t.Fatalf("accepted type %q", v.Type)
		}
		if len(v.Orgs) > maxVisibilityOrgs {
			t.Fatalf("%d orgs", len(v.Orgs))
		}
		for i, o := range v.Orgs {
			if o.GUID == "" || len(o.GUID) > maxErrorText || len(o.Name) > maxErrorText || !utf8.ValidString(o.GUID+o.Name) {
				t.Fatalf("org %+v", o)
			}
			if i > 0 && v.Orgs[i-1].GUID > o.GUID {
				t.Fatal("orgs not sorted")
			}
		}
	})
}
