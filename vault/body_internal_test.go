package vault

import (
	"bytes"
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

// A body of its announced length costs its buffer alone (io.ReadAll, to see
// the end, cost 512 bytes more at each read).
func TestReadBodyAllocatesItsBufferAlone(t *testing.T) {
	body := []byte(strings.Repeat("x", 4000))
	r := bytes.NewReader(body)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(body)
		if got, err := readBody(r, int64(len(body))); err != nil || len(got) != len(body) {
			t.Fatalf("%d bytes, %v", len(got), err)
		}
	})
	if allocs > 1 {
		t.Fatalf("%.1f allocations a read, want 1", allocs)
	}
}
