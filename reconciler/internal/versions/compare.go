package versions

import (
	"cmp"
	"strings"
)

// Compare orders two BOSH release or stemcell versions as the Director does
// when it resolves "latest" (semi_semantic's Version, which
// Bosh::Version::ReleaseVersion and the stemcell lists use):
// RELEASE[-PRE][+POST], each part dot-separated components; a component of
// digits compares as a number of any length ("16.10.0" > "16.9.0", "1.506" >
// "1.80"), others as text, a number before a text; missing trailing
// components count as 0 ("1.0" = "1"); a pre-release comes before its
// release ("1.0.0-dev.3" < "1.0.0"), a post-release after ("1+dev.2" > "1").
// A version that is none of these (the Director refuses them at upload)
// comes before every valid one, and two such compare as text.
func Compare(a, b string) int {
	pa, oka := parse(a)
	pb, okb := parse(b)
	if !oka || !okb {
		return cmp.Or(cmp.Compare(btoi(oka), btoi(okb)), strings.Compare(a, b))
	}
	if c := compareSegment(pa.release, pb.release); c != 0 {
		return c
	}
	if c := compareOptional(pa.pre, pb.pre, 1); c != 0 {
		return c
	}
	return compareOptional(pa.post, pb.post, -1)
}

// HasPrefix says whether version is one the Director picks for
// "PREFIX.latest": the prefix itself, or the prefix followed by '.', '-'
// or '+'. Every version has the empty prefix.
func HasPrefix(version, prefix string) bool {
	rest, ok := strings.CutPrefix(version, prefix)
	return prefix == "" || (ok && (rest == "" || strings.ContainsAny(rest[:1], ".-+")))
}

// semiSemantic is a parsed version; pre and post nil when absent.
type semiSemantic struct {
	release, pre, post []string
}

// parse reads RELEASE[-PRE][+POST]: the release of letters, digits, '_' and
// '.', the pre-release (which may hold '-') up to the first '+', the
// post-release after it; every component non-empty.
func parse(v string) (semiSemantic, bool) {
	var s semiSemantic
	rest, post, hasPost := strings.Cut(v, "+")
	release, pre, hasPre := strings.Cut(rest, "-")
	var ok bool
	if s.release, ok = components(release, false); !ok {
		return s, false
	}
	if hasPre {
		if s.pre, ok = components(pre, true); !ok {
			return s, false
		}
	}
	if hasPost {
		if s.post, ok = components(post, true); !ok {
			return s, false
		}
	}
	return s, true
}

// components splits a part on '.': each component non-empty, of letters,
// digits and '_' (and '-' when dash).
func components(part string, dash bool) ([]string, bool) {
	if part == "" {
		return nil, false
	}
	out := strings.Split(part, ".")
	for _, c := range out {
		if c == "" {
			return nil, false
		}
		for _, r := range c {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || (dash && r == '-')) {
				return nil, false
			}
		}
	}
	return out, true
}

// compareOptional compares a pre- or post-release, nil when absent: an
// absent one is after (absent 1) or before (absent -1) a present one.
func compareOptional(a, b []string, absent int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return absent
	case b == nil:
		return -absent
	}
	return compareSegment(a, b)
}

// compareSegment compares component by component; the longer one's extra
// components count only when one is not zero.
func compareSegment(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if c := compareComponent(a[i], b[i]); c != 0 {
			return c
		}
	}
	longer, sign := a, 1
	if len(b) > len(a) {
		longer, sign = b, -1
	}
	for _, c := range longer[min(len(a), len(b)):] {
		if !isNumber(c) || strings.TrimLeft(c, "0") != "" {
			return sign
		}
	}
	return 0
}

// compareComponent compares two components: numbers by value (of any
// length), a number before a text, texts as text.
func compareComponent(a, b string) int {
	na, nb := isNumber(a), isNumber(b)
	switch {
	case na && nb:
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	case na != nb:
		return cmp.Compare(btoi(!na), btoi(!nb))
	}
	return strings.Compare(a, b)
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
