package broker

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseIdentity(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for header, want := range map[string]identity{
		"": {},
		"cloudfoundry " + enc(`{"user_id":"u-1"}`):                           {platform: "cloudfoundry", user: "u-1"},
		"kubernetes " + enc(`{"username":"alice","uid":"9","groups":["a"]}`): {platform: "kubernetes", user: "alice"},
		"Kubernetes " + enc(`{"uid":"9"}`):                                   {platform: "kubernetes", user: "9"},
		"cloudfoundry " + strings.TrimRight(enc(`{"user_id":"u-2"}`), "="):   {platform: "cloudfoundry", user: "u-2"},
	} {
		got, err := parseIdentity(header)
		if err != nil || got != want {
			t.Errorf("parseIdentity(%q) = %+v, %v; want %+v", header, got, err, want)
		}
	}
	for _, header := range []string{"cloudfoundry", "x " + enc(`{}`), "x " + enc(`{"user_id":""}`), "x%y " + enc(`{"user_id":"u"}`),
		"x " + enc(`null`), "x " + enc(`{"user_id":"`+strings.Repeat("u", 256)+`"}`), "x " + strings.Repeat("A", maxIdentityHeader)} {
		if got, err := parseIdentity(header); err == nil {
			t.Errorf("parseIdentity(%q) = %+v, want an error", header, got)
		}
	}
}

// FuzzParseIdentity: any header is parsed or refused without a panic, and
// what is kept is a bounded, printable platform and user.
func FuzzParseIdentity(f *testing.F) {
	f.Add("cloudfoundry eyJ1c2VyX2lkIjoidSJ9")
	f.Add("kubernetes " + base64.StdEncoding.EncodeToString([]byte(`{"username":"a","extra":{"k":[1]}}`)))
	f.Add("x " + base64.StdEncoding.EncodeToString([]byte(`{"user_id":"\u202e"}`)))
	f.Fuzz(func(t *testing.T, header string) {
		id, err := parseIdentity(header)
		if err != nil {
			if id != (identity{}) {
				t.Fatalf("an error and an identity %+v", id)
			}
			return
		}
		if header != "" && (id.user == "" || len(id.user) > maxContextValue || !utf8.ValidString(id.user) ||
			strings.ContainsFunc(id.user, isControl) || !platformName.MatchString(id.platform)) {
			t.Fatalf("kept %+v from %q", id, header)
		}
	})
}

// FuzzPlatformContext: any context is kept in part or not at all, within bounds.
func FuzzPlatformContext(f *testing.F) {
	f.Add(`{"platform":"cloudfoundry","instance_name":"a","organization_annotations":{"x":"y"}}`)
	f.Add(`{"space_name":5}`)
	f.Add(`[1]`)
	f.Fuzz(func(t *testing.T, raw string) {
		pc := platformContext(json.RawMessage(raw))
		if len(pc) > len(contextKeys) {
			t.Fatalf("kept %d fields", len(pc))
		}
		for k, v := range pc {
			if v == "" || len(v) > maxContextValue || !utf8.ValidString(v) || strings.ContainsFunc(v, isControl) {
				t.Fatalf("kept %s = %q", k, v)
			}
		}
	})
}
