package fleet

import (
	"bytes"
	"compress/flate"
	"io"
	"strings"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// A flate writer holds about a megabyte of state: one per manifest would be
// most of what a cold run allocates. They are reused, as are readers.
var (
	writers = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, zipLevel) // the level is valid
		return w
	}}
	readers = sync.Pool{New: func() any { return flate.NewReader(nil) }}
)

// zipLevel is the fastest level that matches into the dictionary whatever
// the text's length (BestSpeed leaves a short text, such as a VM list, as it
// is): ~35 µs a simulator manifest, ~25 at BestSpeed.
const zipLevel = 2

// A cache keeps at most maxDictionaries pairs of dictionaries (deployments
// of other releases are compressed without one), each of at most
// maxDictionary bytes: a Director listing ever new releases makes it hold no
// more than 2 MiB. A text shorter than minDictionary (a VM list of a
// deployment with no VMs yet, "[]") makes none (the next one does), nor do
// releases whose names make a key longer than maxDictionaryKey.
const (
	maxDictionaries  = 64
	maxDictionary    = 16 << 10
	minDictionary    = 64
	maxDictionaryKey = 1 << 10
)

// dictionary is the first manifest (or VM list, packed) a cache compressed
// of deployments of some releases, against which the later ones are
// compressed: the manifests of one service's instances are mostly the same
// text (a simulator's manifest of 896 bytes takes ~390 alone, ~50-120
// against another one's), and so are their VM lists but for ids and IPs.
// It never changes: what was compressed against it needs it to inflate.
type dictionary struct{ text []byte }

// dictionaries are a cache's, by the release names of the listing entry.
type dictionaries struct {
	mu sync.Mutex
	by map[string]*dictPair
}

type dictPair struct{ manifest, vms *dictionary }

// dictsFor gives the dictionaries to compress a manifest and packed VMs
// against (nil: none), made of them when there are none yet.
type dictsFor func(manifest string, vms []byte) (forManifest, forVMs *dictionary)

// of returns the dictionaries of d's releases, the first made of manifest
// and the second of vms when they have none yet (a copy fetched without
// VMs makes none for them); nil when the cache holds its most dictionaries.
func (ds *dictionaries) of(d bosh.Deployment, manifest string, vms []byte) (forManifest, forVMs *dictionary) {
	var key strings.Builder
	for _, r := range d.Releases {
		key.WriteString(r.Name)
		key.WriteByte(',')
	}
	if key.Len() > maxDictionaryKey {
		return nil, nil
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	p, ok := ds.by[key.String()]
	if !ok {
		if len(ds.by) >= maxDictionaries {
			return nil, nil
		}
		if ds.by == nil {
			ds.by = map[string]*dictPair{}
		}
		p = &dictPair{}
		ds.by[key.String()] = p
	}
	if p.manifest == nil && len(manifest) >= minDictionary {
		p.manifest = &dictionary{text: []byte(manifest[:min(len(manifest), maxDictionary)])}
	}
	if p.vms == nil && len(vms) >= minDictionary {
		p.vms = &dictionary{text: bytes.Clone(vms[:min(len(vms), maxDictionary)])}
	}
	return p.manifest, p.vms
}

// zipped is a text compressed, with the dictionary it needs (nil: none).
type zipped struct {
	data []byte
	dict *dictionary
}

// deflate compresses a manifest (or packed VMs) for the cache, against dict
// (nil: none), at a fast level, as every fetched manifest goes through it. The writer
// compresses the dictionary first and flushes, which ends its output on a
// byte; what follows is the manifest, whose matches may reach back into the
// dictionary, as a reader given the dictionary resolves them.
func deflate(text string, dict *dictionary) zipped {
	var b bytes.Buffer
	b.Grow(len(text)/2 + 64)
	if dict != nil {
		b.Grow(len(dict.text) / 2) // its output is written too, then skipped
	}
	w := writers.Get().(*flate.Writer)
	defer writers.Put(w)
	w.Reset(&b)
	skip := 0
	if dict != nil {
		_, _ = w.Write(dict.text) // a bytes.Buffer does not fail
		_ = w.Flush()
		skip = b.Len()
	}
	_, _ = io.WriteString(w, text)
	_ = w.Close()
	return zipped{data: bytes.Clone(b.Bytes()[skip:]), dict: dict}
}

// inflate is the text deflate compressed.
func inflate(z zipped) (string, error) {
	var dict []byte
	if z.dict != nil {
		dict = z.dict.text
	}
	r := readers.Get().(io.ReadCloser)
	defer readers.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(z.data), dict); err != nil {
		return "", err
	}
	// Not io.Copy: a flate reader has no WriteTo, and io.Copy would
	// allocate 32 KiB for each text of some hundred bytes (a run that
	// digests every cached copy inflates 100,000 of them).
	b := bytes.NewBuffer(make([]byte, 0, max(512, 8*len(z.data))))
	if _, err := b.ReadFrom(r); err != nil {
		return "", err
	}
	return b.String(), nil
}
