package fleet

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
)

// deflate compresses a manifest for the cache (YAML shrinks to about a
// quarter; the fastest level, as every fetched manifest goes through it).
func deflate(text string) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestSpeed) // the level is valid
	_, _ = io.Copy(w, strings.NewReader(text))   // a bytes.Buffer does not fail
	_ = w.Close()
	return bytes.Clone(b.Bytes())
}

// inflate is the text deflate compressed.
func inflate(zipped []byte) (string, error) {
	var b strings.Builder
	if _, err := io.Copy(&b, flate.NewReader(bytes.NewReader(zipped))); err != nil {
		return "", err
	}
	return b.String(), nil
}

// sha256Hex is the SHA-256 of text, hex.
func sha256Hex(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}
