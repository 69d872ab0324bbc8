package ids_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/blacksmith-reconciler/blacksmith/internal/ids"
)

func TestInstance(t *testing.T) {
	for id, want := range map[string]string{
		"6f1e2d3c-4b5a-4978-8a9b-0c1d2e3f4a5b": "",
		"redis_1.a":                            "",
		strings.Repeat("a", ids.MaxLength):     "",
		strings.Repeat("a", ids.MaxLength+1):   "longer than",
		"":                                     "not made of",
		".":                                    "not made of",
		"..":                                   "not made of",
		"a/b":                                  "not made of",
		"a b":                                  "not made of",
		"i\u200b":                              "not made of",
		"i\u2028":                              "not made of",
		"i\u202e":                              "not made of",
		"\ufeffi":                              "not made of",
		"é":                                    "not made of",
		"blacksmith":                           "reserved",
		"db":                                   "reserved",
	} {
		got := ids.Instance(id)
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("Instance(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestDeployment(t *testing.T) {
	for name, ok := range map[string]bool{
		"redis-small-6f1e2d3c-4b5a-4978-8a9b-0c1d2e3f4a5b": true,
		"cf": true, "db": true, // reserved only as instance ids
		strings.Repeat("a", ids.MaxDeploymentName+1): false,
		"cf\u202e": false, "": false, "a:b": false,
	} {
		if got := ids.Deployment(name) == ""; got != ok {
			t.Errorf("Deployment(%q) accepted = %v, want %v", name, got, ok)
		}
	}
}

// FuzzInstance: whatever is accepted is printable ASCII without space or
// slash, so that it reaches Vault paths and the dashboard as it is.
func FuzzInstance(f *testing.F) {
	for _, seed := range []string{"a", "..", "i\u200b", "blacksmith", "a/b", "\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if ids.Instance(id) != "" {
			return
		}
		for _, c := range id {
			if c > unicode.MaxASCII || c <= ' ' || c == '/' || c == 0x7f {
				t.Fatalf("accepted %q holding %U", id, c)
			}
		}
		if id == "." || id == ".." || len(id) > ids.MaxLength {
			t.Fatalf("accepted %q", id)
		}
	})
}
