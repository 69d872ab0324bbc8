package match

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Latest is a release or stemcell a manifest asks for as the newest
// uploaded: version "latest", or "PREFIX.latest" for the newest whose
// version starts with PREFIX, as the Director resolves them when it deploys
// (manifest.rb, match_resolvable_version). The Director keeps the manifest
// as it was sent, so what it answers still says "latest".
type Latest struct {
	// Stemcell says a stemcell; else a release.
	Stemcell bool
	// Name is the release's name; a stemcell's operating system (OS), else its name.
	Name string
	OS   bool
	// Prefix is "" for "latest", "621" for "621.latest".
	Prefix string
}

// The fields read of the manifest and its entries for AsksLatest.
var (
	latestFields  = []string{"releases", "stemcells"}
	releaseFields = []string{"name", "version"}
)

// MayAskLatest says whether text can ask for a latest at all: it says
// "latest", or has a backslash (an escape could spell it). AsksLatest of a
// text it says no to is nothing.
func MayAskLatest(text string) bool {
	return strings.Contains(text, "latest") || strings.Contains(text, `\`)
}

// AsksLatest returns the releases and stemcells a manifest asks for as the
// newest uploaded, releases first, in the manifest's order; none for a text
// that cannot say "latest" (not even with escapes). Like RecordInfo it
// parses only the top-level releases and stemcells blocks when they can be
// cut out safely, else the whole manifest, within the same bounds.
func AsksLatest(text string) ([]Latest, error) {
	if !MayAskLatest(text) {
		return nil, nil
	}
	if err := checkBounds(text); err != nil {
		return nil, fmt.Errorf("reading latest versions: %w", err)
	}
	if block, ok := topLevelBlocks(text, "releases:", "stemcells:"); ok {
		if out, err := readLatest(block); err == nil {
			return out, nil
		}
	}
	out, err := readLatest(text)
	if err != nil {
		return nil, fmt.Errorf("reading latest versions: %w", err)
	}
	return out, nil
}

// readLatest parses text and walks its releases and stemcells.
func readLatest(text string) ([]Latest, error) {
	doc, err := parseNode(text)
	if err != nil {
		return nil, err
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind == 0 || isNull(doc) {
		return nil, nil
	}
	root, err := mappingAt(doc, "the manifest")
	if err != nil {
		return nil, err
	}
	budget := maxNodes
	w, err := newWalk(root, latestFields, &budget)
	if err != nil {
		return nil, err
	}
	var out []Latest
	err = w.each("releases", releaseFields, func(r walk) error {
		var name, version string
		if err := r.str("name", &name); err != nil {
			return err
		}
		if err := r.str("version", &version); err != nil {
			return err
		}
		if prefix, ok := latestPrefix(version); ok && name != "" {
			out = append(out, Latest{Name: name, Prefix: prefix})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = w.each("stemcells", stemcellFields, func(s walk) error {
		var os, name, version string
		for key, to := range map[string]*string{"os": &os, "name": &name, "version": &version} {
			if err := s.str(key, to); err != nil {
				return err
			}
		}
		prefix, ok := latestPrefix(version)
		switch {
		case !ok:
		case os != "": // the Director looks the os up first
			out = append(out, Latest{Stemcell: true, Name: os, OS: true, Prefix: prefix})
		case name != "":
			out = append(out, Latest{Stemcell: true, Name: name, Prefix: prefix})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// latestPrefix says whether version asks for the newest uploaded, and with
// which prefix: "latest" (none) or "PREFIX.latest".
func latestPrefix(version string) (string, bool) {
	if version == "latest" {
		return "", true
	}
	prefix, ok := strings.CutSuffix(version, ".latest")
	return prefix, ok && prefix != ""
}
