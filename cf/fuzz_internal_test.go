package cf

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

var errorSeeds = []string{
	`{"errors":[{"detail":"Service instance not found","title":"CF-ResourceNotFound","code":10010}]}`,
	`{"errors":[{"detail":"Invalid Auth Token","title":"CF-InvalidAuthToken","code":1000}]}`,
	`{"errors":[{"title":"UnknownError","detail":"An unknown error occurred.","code":10001}]}`,
	`{"errors":[]}`, `{"errors":null}`, `{"errors":[{"code":"x"}]}`, `{"errors":[{"code":1e400}]}`,
	`<html>502 Bad Gateway</html>`, "", "\xff\xfe", `{"errors":[{"detail":"` + strings.Repeat("é", 600) + `"}]}`,
}

// FuzzParseAPIError: any answer gives an *APIError with bounded, valid
// UTF-8 texts, and never panics.
func FuzzParseAPIError(f *testing.F) {
	for i, s := range errorSeeds {
		f.Add(400+i*10, "", s)
	}
	f.Add(429, "1700000000", `{"errors":[{"title":"CF-RateLimitExceeded","code":10013}]}`)
	f.Add(429, "99999999999999999999", "")
	f.Fuzz(func(t *testing.T, status int, reset, body string) {
		h := http.Header{"X-Ratelimit-Reset": {reset}, "Retry-After": {reset}}
		e := ParseAPIError(epInstances, status, h, []byte(body))
		for _, s := range []string{e.Title, e.Detail} {
			if len(s) > maxErrorText || !utf8.ValidString(s) {
				t.Fatalf("text %q: %d bytes or not UTF-8", s, len(s))
			}
		}
		if len(e.Error()) > 3*maxErrorText {
			t.Fatalf("error text %d bytes", len(e.Error()))
		}
		if errors.Is(e, ErrNotFound) != (status == 404) || errors.Is(e, ErrUnavailable) != (status >= 500) {
			t.Fatalf("status %d matched the wrong sentinels", status)
		}
	})
}

var pageSeeds = []string{
	`{"pagination":{"total_results":1,"total_pages":1,"first":{"href":"http://127.0.0.1:1/v3/service_instances?page=1"},"last":{"href":"http://127.0.0.1:1/v3/service_instances?page=1"},"next":null,"previous":null},` +
		`"resources":[{"guid":"g1","name":"n1","type":"managed","last_operation":{"type":"create","state":"succeeded","description":"ok","updated_at":"2026-01-02T03:04:05Z","created_at":"2026-01-02T03:04:05Z"},` +
		`"relationships":{"space":{"data":{"guid":"s1"}},"service_plan":{"data":{"guid":"p1"}}}}],` +
		`"included":{"spaces":[{"guid":"s1","name":"space","relationships":{"organization":{"data":{"guid":"o1"}}}}],"organizations":[{"guid":"o1","name":"org"}]}}`,
	`{"pagination":{"next":{"href":"http://127.0.0.1:1/v3/service_instances?page=2"}},"resources":[{"last_operation":{}}]}`,
	`{"pagination":{"next":{"href":"http://127.0.0.2:1/v3/service_instances?page=2"}},"resources":[]}`,
	`{"pagination":{"next":{"href":"://bad"}},"resources":[]}`,
	`{"resources":[]}`, `{"pagination":null}`, `{"pagination":{},"resources":[{"last_operation":{"updated_at":"junk"}}]}`,
	`{"pagination":{},"resources":[{"relationships":{"space":{"data":null}}}],"included":{"spaces":null}}`,
	`[]`, `null`, ``, `{"pagination":{}`,
}

// FuzzDecodePage: any body decodes into a page or an ErrUnavailable error;
// an accepted page's next link is followed only toward the API.
func FuzzDecodePage(f *testing.F) {
	for _, s := range pageSeeds {
		f.Add(s)
	}
	c, err := New(Options{API: "http://127.0.0.1:1", ClientID: "id", ClientSecret: "secret"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		p, err := DecodePage[instanceJSON, includedJSON](epInstances, []byte(body))
		if err != nil {
			if !errors.Is(err, ErrUnavailable) || len(err.Error()) > 3*maxErrorText {
				t.Fatalf("error %v: not ErrUnavailable or too long", err)
			}
			return
		}
		spaces, orgs := p.Included.index()
		for _, r := range p.Resources {
			in := r.instance()
			_ = orgs[spaces[in.SpaceGUID].Relationships.Organization.Data.GUID]
		}
		u, err := c.next(epInstances, p, map[string]bool{})
		if err == nil && u != nil && (!c.sameOrigin(u) || u.Path != epInstances) {
			t.Fatalf("next link %v accepted", u)
		}
		if err != nil && !errors.Is(err, ErrUnsafeLink) {
			t.Fatalf("next: %v", err)
		}
	})
}

// FuzzParseToken: a token accepted goes into a header unchanged.
func FuzzParseToken(f *testing.F) {
	for _, s := range []string{`{"access_token":"abc","token_type":"bearer","expires_in":600,"scope":"x","jti":"j"}`,
		`{"access_token":"a b"}`, `{"access_token":"abc","token_type":"mac"}`, `{"expires_in":-1}`, `{}`, `x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		a, err := ParseToken([]byte(body))
		if err != nil {
			return
		}
		if a.AccessToken == "" || strings.ContainsAny(a.AccessToken, " \r\n\t") {
			t.Fatalf("token %q accepted", a.AccessToken)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/", nil)
		req.Header.Set("Authorization", "bearer "+a.AccessToken)
	})
}
