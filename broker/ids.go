package broker

import (
	"fmt"
	"net/url"

	"github.com/blacksmith-reconciler/blacksmith/internal/ids"
)

// idError says what is wrong with one escaped path segment as an id: it
// must be made of letters, digits, '-', '_' and '.', not be "." or "..",
// and be at most maxLen characters. An id becomes part of a BOSH deployment
// name ({planID}-{instanceID}) and of Vault paths; UUIDs, which platforms
// use, fit.
func idError(kind, segment string, maxLen int) error {
	id, err := url.PathUnescape(segment)
	if err != nil {
		id = segment
	}
	if len(id) > maxLen {
		return fmt.Errorf("%s id is %d characters; at most %d are accepted (a UUID fits)", kind, len(id), maxLen)
	}
	if err != nil || !ids.Chars(id) || id == "." || id == ".." {
		return fmt.Errorf("%s id %q is not valid: use letters, digits, '-', '_' and '.' only (a UUID fits)", kind, id)
	}
	if kind == "instance" && ids.Reserved(id) {
		return fmt.Errorf("instance id %q is reserved: the broker keeps its own records under that name", id)
	}
	return nil
}
