package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCut: whatever the text, the bound and the marker, what Prefix and
// Marked return is never over the bound, is the text itself when it fits,
// else a start of it (and the marker, when it fits), and is valid UTF-8
// when the text and the marker are.
func FuzzCut(f *testing.F) {
	f.Add("abcdefghijk", 10, "...")
	f.Add("abcde\u20acghijk", 10, "…")
	f.Add("\xff\xfe\x80abc", 2, "")
	f.Add("\U0001F600\U0001F600", 5, "...")
	f.Fuzz(func(t *testing.T, s string, n int, marker string) {
		p, m := Prefix(s, n), Marked(s, n, marker)
		for _, got := range []string{p, m} {
			if len(got) > max(n, 0) {
				t.Fatalf("%q of %d bytes for a bound of %d", got, len(got), n)
			}
			if utf8.ValidString(s) && utf8.ValidString(marker) && !utf8.ValidString(got) {
				t.Fatalf("%q cut into invalid UTF-8 %q", s, got)
			}
		}
		if len(s) <= n && (p != s || m != s) {
			t.Fatalf("%q fits in %d bytes but was cut to %q and %q", s, n, p, m)
		}
		if !strings.HasPrefix(s, p) {
			t.Fatalf("%q is not a start of %q", p, s)
		}
		start, marked := strings.CutSuffix(m, marker)
		if len(s) > n && len(marker) <= n && !marked {
			t.Fatalf("%q cut to %q without its marker %q", s, m, marker)
		}
		if !strings.HasPrefix(s, start) {
			t.Fatalf("%q is not a start of %q and the marker", m, s)
		}
		if utf8.ValidString(s) && len(s) > n && len(p) < n-utf8.UTFMax+1 {
			t.Fatalf("%q cut to %q: more than a character short of %d bytes", s, p, n)
		}
	})
}
