package textcut

import "unicode/utf8"

// Prefix is s when it is at most n bytes long, else its longest start of at
// most n bytes that ends where a character starts: "" when n is 0 or less.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Marked is s when it is at most n bytes long, else its start cut as Prefix
// cuts it and marker after it, n bytes at most in all. When marker itself
// does not fit in n bytes, it is left out: the start alone.
func Marked(s string, n int, marker string) string {
	if len(s) <= n {
		return s
	}
	if len(marker) > n {
		return Prefix(s, n)
	}
	return Prefix(s, n-len(marker)) + marker
}
