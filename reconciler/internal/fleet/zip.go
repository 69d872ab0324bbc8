package fleet

import (
	"bytes"
	"compress/flate"
	"io"
	"strings"
	"sync"
)

// A flate writer holds about a megabyte of state: one per manifest would be
// most of what a cold run allocates. They are reused, as are readers.
var (
	writers = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, flate.BestSpeed) // the level is valid
		return w
	}}
	readers = sync.Pool{New: func() any { return flate.NewReader(nil) }}
)

// deflate compresses a manifest for the cache (the fastest level, as every
// fetched manifest goes through it).
func deflate(text string) []byte {
	var b bytes.Buffer
	b.Grow(len(text)/2 + 64)
	w := writers.Get().(*flate.Writer)
	defer writers.Put(w)
	w.Reset(&b)
	_, _ = io.WriteString(w, text) // a bytes.Buffer does not fail
	_ = w.Close()
	return bytes.Clone(b.Bytes())
}

// inflate is the text deflate compressed.
func inflate(zipped []byte) (string, error) {
	r := readers.Get().(io.ReadCloser)
	defer readers.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(zipped), nil); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(2 * len(zipped))
	if _, err := io.Copy(&b, r); err != nil {
		return "", err
	}
	return b.String(), nil
}
