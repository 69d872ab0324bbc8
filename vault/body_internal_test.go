package vault

import (
	"strings"
	"testing"
)

// readBody reads what a body holds, whatever length it announced.
func TestReadBodyReadsWhatIsThere(t *testing.T) {
	body := strings.Repeat("0123456789", 700)
	for _, n := range []int64{-1, 0, int64(len(body)), int64(len(body)) - 10, int64(len(body)) + 10} {
		got, err := readBody(strings.NewReader(body), n)
		switch {
		case n > int64(len(body)):
			if err == nil {
				t.Fatalf("announced %d for %d bytes: no error", n, len(body))
			}
		case err != nil || string(got) != body:
			t.Fatalf("announced %d: %d bytes, %v", n, len(got), err)
		}
		if n == int64(len(body)) && cap(got) != len(body) {
			t.Fatalf("announced exactly: a buffer of %d for %d", cap(got), len(body))
		}
	}
}
