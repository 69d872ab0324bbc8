package broker

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pivotal-cf/brokerapi/v11/domain"
)

// goText matches what Go's own error texts would show a platform user.
var goText = regexp.MustCompile(`Go struct|Go value|json: |unexpected end of JSON|invalid character|(?i)unmarshal|domain\.|reflect|\[\]uint8|map\[string\]`)

// FuzzRequestBody: a body the guard lets through decodes as brokerapi will
// decode it, with parameters the broker can read, within the bounds; a body
// it refuses gets a 400 that says why in plain words.
func FuzzRequestBody(f *testing.F) {
	for _, seed := range []string{
		`{"service_id":"redis","plan_id":"redis-small","organization_guid":"o","space_guid":"s"}`,
		`{"service_id":"redis","plan_id":"redis-small","parameters":{"maxmemory":"512mb","n":[1,{"a":null}]}}`,
		`{"service_id":5}`,
		`{"parameters":"x"}`,
		`{"parameters":{"a":[[[[[[[[[[[[1]]]]]]]]]]]]}}`,
		`{"context":{"platform":"cloudfoundry","organization_name":"org"},"maintenance_info":{"version":"1.0"}}`,
		`{"bind_resource":{"app_guid":"a","route":"r"},"app_guid":"x"}`,
		`[]`, `{`, ``, `null`, `{"space_guid":"a\nb"}`, `{"a":"\ud800"}`,
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	l := DefaultLimits
	f.Fuzz(func(t *testing.T, body []byte, bind bool) {
		kind, method := "instance", http.MethodPut
		if bind {
			kind = "binding"
		}
		err := l.checkBody(kind, method, body)
		if err != nil {
			if err.status != http.StatusBadRequest {
				t.Fatalf("status %d for a body", err.status)
			}
			if goText.MatchString(err.msg) || !utf8.ValidString(err.msg) || len(err.msg) > 400 {
				t.Fatalf("the user would see %q", err.msg)
			}
			return
		}
		var details any = &domain.ProvisionDetails{}
		if bind {
			details = &domain.BindDetails{}
		}
		if uerr := json.Unmarshal(body, details); uerr != nil {
			t.Fatalf("accepted a body brokerapi cannot decode: %v", uerr)
		}
		var raw struct {
			Parameters json.RawMessage `json:"parameters"`
		}
		_ = json.Unmarshal(body, &raw)
		params, perr := parseParams(raw.Parameters)
		if perr != nil {
			t.Fatalf("accepted parameters the broker cannot read: %v", perr)
		}
		if len(raw.Parameters) > l.MaxParametersBytes {
			t.Fatalf("accepted %d bytes of parameters", len(raw.Parameters))
		}
		if d := refDepth(params); d > l.MaxParametersDepth {
			t.Fatalf("accepted parameters nested %d deep", d)
		}
	})
}

// refDepth is the nesting depth of decoded JSON, recursively (the
// reference depthOf is checked against).
func refDepth(v any) int {
	deepest := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			deepest = max(deepest, refDepth(e))
		}
		return deepest + 1
	case []any:
		for _, e := range x {
			deepest = max(deepest, refDepth(e))
		}
		return deepest + 1
	}
	return 0
}

// FuzzDepthOf: depthOf, which scans bytes, agrees with the decoded value's depth.
func FuzzDepthOf(f *testing.F) {
	for _, seed := range []string{`{}`, `[]`, `1`, `"a"`, `{"a":[1,{"b":"]}"}]}`, `[[["\"[{"]]]`, `{"k\\":{":[{}]}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		if got, want := depthOf(data), refDepth(v); got != want {
			t.Fatalf("depthOf(%q) = %d, decoded depth %d", data, got, want)
		}
	})
}

// FuzzIDs: an id the broker accepts is one a BOSH deployment name and a
// Vault path can hold.
func FuzzIDs(f *testing.F) {
	for _, seed := range []string{"6c1e4c5e-5d5a-4f6e-9a43-0d2f1b7e8c11", "a%2Fb", "..", ".", "a b", "caf%C3%A9", "%", strings.Repeat("a", 65), "x%00y"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, segment string) {
		if idError("instance", segment, 64) != nil {
			return
		}
		id, err := url.PathUnescape(segment)
		if err != nil {
			t.Fatalf("accepted %q, which does not unescape", segment)
		}
		if len(id) == 0 || len(id) > 64 || id == "." || id == ".." || strings.ContainsAny(id, "/\\ \n\x00%") {
			t.Fatalf("accepted id %q", id)
		}
	})
}
