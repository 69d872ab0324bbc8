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
func (g *gate) authorize(w http.ResponseWriter, r *http.Request) (string, bool) {
	id, ok := g.identify(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="BOSH Director"`)
		writeText(w, http.StatusUnauthorized, fmt.Sprintf("Not authorized: '%s'\n", r.URL.Path))
		return "", false
	}
	readOnly := r.Method == http.MethodGet || r.Method == http.MethodHead
	if id.admin || (readOnly && id.read) {
		return id.user, true
	}
	scopes := []string{"bosh.admin", "bosh." + g.opts.UUID + ".admin"}
	if readOnly {
		scopes = append(scopes, "bosh.read", "bosh."+g.opts.UUID+".read")
	}
	writeError(w, http.StatusUnauthorized, codeScope, "Require one of the scopes: %s", strings.Join(scopes, ", "))
	return "", false
}

// identify reads the request's credentials: basic auth in basic mode, a
// bearer token issued by the built-in UAA in uaa mode.
func (g *gate) identify(r *http.Request) (identity, bool) {
	if g.opts.Auth == AuthBasic {
		user, pass, ok := r.BasicAuth()
		if !ok || !equal(user, g.opts.Username) || !equal(pass, g.opts.Password) {
			return identity{}, false
		}
		return identity{user: user, read: true, admin: true}, true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return identity{}, false
	}
	c, ok := g.tokens.verify(strings.TrimSpace(token))
	if !ok {
		return identity{}, false
	}
	admin := slices.Contains(c.Scope, "bosh.admin") || slices.Contains(c.Scope, "bosh."+g.opts.UUID+".admin")
	read := admin || slices.Contains(c.Scope, "bosh.read") || slices.Contains(c.Scope, "bosh."+g.opts.UUID+".read")
	return identity{user: c.ClientID, read: read, admin: admin}, true
}

// requireAdmin answers 401 (600000) unless the caller has the admin scope:
// GET /cpi_configs names no scope, so it needs the default one.
func (g *gate) requireAdmin(w http.ResponseWriter, r *http.Request) bool {
	if id, _ := g.identify(r); id.admin {
		return true
	}
	writeError(w, http.StatusUnauthorized, codeScope, "Require one of the scopes: bosh.admin, bosh.%s.admin", g.opts.UUID)
	return false
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
