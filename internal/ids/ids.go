// Package ids holds the rules for the names the broker writes under: the
// instance and binding ids of the OSB API and the BOSH deployment names made
// of them. The broker checks what a platform sends with them, the
// reconciler what a Director lists, so that no id the broker could not have
// made reaches a Vault path or a record.
package ids

import (
	"fmt"
	"strings"
)

// MaxLength bounds an id (broker.max_id_length may lower it; a UUID is 36).
const MaxLength = 255

// MaxDeploymentName bounds a deployment name: "{planID}-{instanceID}".
const MaxDeploymentName = 2*MaxLength + 1

// reserved are the instance ids whose Vault folder is the broker's own: its
// index, history, run log and state ("blacksmith"), the legacy index ("db").
var reserved = map[string]bool{"blacksmith": true, "db": true}

// Chars says whether s is made only of what an id may hold: ASCII letters,
// digits, '-', '_' and '.' (so no space, slash, control, invisible or
// bidirectional character). The empty string is not.
func Chars(s string) bool {
	return s != "" && strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	}) < 0
}

// Instance says what is wrong with id as an instance id, or "": the
// characters of Chars, not "." or "..", at most MaxLength, not reserved.
func Instance(id string) string {
	switch {
	case len(id) > MaxLength:
		return fmt.Sprintf("longer than %d characters", MaxLength)
	case !Chars(id) || id == "." || id == "..":
		return "not made of ASCII letters, digits, '-', '_' and '.' only"
	case reserved[id]:
		return "reserved: the broker keeps its own records under that name"
	}
	return ""
}

// Reserved says whether id is one the broker keeps its own records under.
func Reserved(id string) bool { return reserved[id] }

// Deployment says what is wrong with name as the name of a deployment the
// broker may record, or "": the characters of Chars, at most
// MaxDeploymentName.
func Deployment(name string) string {
	switch {
	case len(name) > MaxDeploymentName:
		return fmt.Sprintf("longer than %d characters", MaxDeploymentName)
	case !Chars(name):
		return "not made of ASCII letters, digits, '-', '_' and '.' only"
	}
	return ""
}
