package basicauth

import (
	"net/http"
	"slices"
)

// Role is what a user may do.
type Role int

const (
	// None is a request that carries no known credentials.
	None Role = iota
	// Viewer reads: GET and HEAD.
	Viewer
	// Admin reads and acts.
	Admin
)

// User is one pair of credentials and its role. A user with an empty name
// is never matched.
type User struct {
	Username, Password string
	Role               Role
}

// RoleHeader names, in each answer RequireRole lets through, the role of
// the credentials ("admin" or "viewer"): the dashboard hides what a viewer
// may not do.
const RoleHeader = "X-Blacksmith-Role"

// forbidden is the JSON body of a 403 to a viewer that asked to act.
const forbidden = "{\n  \"description\": \"forbidden: these credentials only read (GET, HEAD); acting takes the operator's admin credentials\"\n}\n"

// RoleOf is the role of the user whose credentials r carries, None when it
// carries no listed user's. Every user is compared, in constant time.
func RoleOf(r *http.Request, users []User) Role {
	role := None
	for _, u := range users {
		if u.Username != "" && Authorized(r, u.Username, u.Password) {
			role = max(role, u.Role)
		}
	}
	return role
}

// RequireRole wraps next so that it answers only the users listed: any
// other request gets 401, a Viewer's request other than GET or HEAD 403,
// both with a JSON body.
func RequireRole(users []User, next http.Handler) http.Handler {
	users = slices.Clone(users)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch RoleOf(r, users) {
		case Admin:
			w.Header().Set(RoleHeader, "admin")
			next.ServeHTTP(w, r)
			return
		case Viewer:
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				w.Header().Set(RoleHeader, "viewer")
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(forbidden))
			return
		}
		deny(w)
	})
}
