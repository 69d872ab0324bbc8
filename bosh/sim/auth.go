package sim

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// identity is who made a request and what the Director lets them do.
type identity struct {
	user        string
	read, admin bool
}

// authorize authenticates a request and checks its scope; on failure it has
// answered the request.
func (d *Director) authorize(w http.ResponseWriter, r *http.Request) (string, bool) {
	id, ok := d.identify(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="BOSH Director"`)
		writeText(w, http.StatusUnauthorized, fmt.Sprintf("Not authorized: '%s'\n", r.URL.Path))
		return "", false
	}
	readOnly := r.Method == http.MethodGet || r.Method == http.MethodHead
	if id.admin || (readOnly && id.read) {
		return id.user, true
	}
	scopes := []string{"bosh.admin", "bosh." + d.opts.UUID + ".admin"}
	if readOnly {
		scopes = append(scopes, "bosh.read", "bosh."+d.opts.UUID+".read")
	}
	writeError(w, http.StatusUnauthorized, codeScope, "Require one of the scopes: %s", strings.Join(scopes, ", "))
	return "", false
}

// identify reads the request's credentials: basic auth in basic mode, a
// bearer token issued by the built-in UAA in uaa mode.
func (d *Director) identify(r *http.Request) (identity, bool) {
	if d.opts.Auth == AuthBasic {
		user, pass, ok := r.BasicAuth()
		if !ok || !equal(user, d.opts.Username) || !equal(pass, d.opts.Password) {
			return identity{}, false
		}
		return identity{user: user, read: true, admin: true}, true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return identity{}, false
	}
	c, ok := d.tokens.verify(strings.TrimSpace(token))
	if !ok {
		return identity{}, false
	}
	admin := slices.Contains(c.Scope, "bosh.admin") || slices.Contains(c.Scope, "bosh."+d.opts.UUID+".admin")
	read := admin || slices.Contains(c.Scope, "bosh.read") || slices.Contains(c.Scope, "bosh."+d.opts.UUID+".read")
	return identity{user: c.ClientID, read: read, admin: admin}, true
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
