package broker

import (
	"fmt"
	"net/url"
	"regexp"
)

// validID is what an instance or binding id may be made of: it becomes part
// of a BOSH deployment name ({planID}-{instanceID}) and of Vault paths. UUIDs,
// which platforms use, fit.
var validID = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// reservedIDs are the instance ids whose Vault folder is the broker's own:
// its index, history, run log and state ("blacksmith"), the legacy index ("db").
var reservedIDs = map[string]bool{"blacksmith": true, "db": true}

// idError says what is wrong with one escaped path segment as an id: it
// must be made of letters, digits, '-', '_' and '.', not be "." or "..",
// and be at most maxLen characters.
func idError(kind, segment string, maxLen int) error {
	id, err := url.PathUnescape(segment)
	if err != nil {
		id = segment
	}
	if len(id) > maxLen {
		return fmt.Errorf("%s id is %d characters; at most %d are accepted (a UUID fits)", kind, len(id), maxLen)
	}
	if err != nil || !validID.MatchString(id) || id == "." || id == ".." {
		return fmt.Errorf("%s id %q is not valid: use letters, digits, '-', '_' and '.' only (a UUID fits)", kind, id)
	}
	if kind == "instance" && reservedIDs[id] {
		return fmt.Errorf("instance id %q is reserved: the broker keeps its own records under that name", id)
	}
	return nil
}
