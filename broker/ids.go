package broker

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// validID is what an instance or binding id may be made of: it becomes part
// of a BOSH deployment name ({planID}-{instanceID}) and of Vault paths. UUIDs,
// which platforms use, fit.
var validID = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// checkIDs answers 400, naming the id, to any /v2/service_instances/ request
// whose instance or binding id is not made of letters, digits, '-', '_' and
// '.' (or is "." or ".."), before it can reach Vault or the Director.
func checkIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := pathIDsError(r.URL.EscapedPath()); err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody{Error: "BadRequest", Description: err.Error()})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// pathIDsError checks the ids in an escaped /v2/service_instances/{id}[/service_bindings/{bid}] path.
func pathIDsError(escaped string) error {
	parts := strings.Split(strings.Trim(escaped, "/"), "/")
	if len(parts) < 3 || parts[0] != "v2" || parts[1] != "service_instances" {
		return nil
	}
	if err := idError("instance", parts[2]); err != nil {
		return err
	}
	if len(parts) >= 5 && parts[3] == "service_bindings" {
		return idError("binding", parts[4])
	}
	return nil
}

// idError says what is wrong with one escaped path segment as an id.
func idError(kind, segment string) error {
	id, err := url.PathUnescape(segment)
	if err != nil {
		id = segment
	}
	if err != nil || !validID.MatchString(id) || id == "." || id == ".." {
		return fmt.Errorf("%s id %q is not valid: use letters, digits, '-', '_' and '.' only (a UUID fits)", kind, id)
	}
	return nil
}
