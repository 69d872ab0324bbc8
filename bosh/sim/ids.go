package sim

import (
	"crypto/rand"
	"crypto/sha1"
	"fmt"
	"strings"
)

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b[:])
}

// stableUUID is a UUID (version 5 style) derived from parts, so that the
// same instance keeps its ids across requests and deploys.
func stableUUID(parts ...string) string {
	sum := sha1.Sum([]byte(strings.Join(parts, "\x00")))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

func formatUUID(b []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
