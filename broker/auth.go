package broker

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
)

// BasicAuth wraps next so that it only answers requests carrying the given
// basic-auth credentials; any other request gets 401 with a JSON body.
// Credentials are compared in constant time.
func BasicAuth(username, password string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !authorized(r, username, password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="blacksmith"`)
			writeJSON(w, http.StatusUnauthorized, errorBody{Description: "unauthorized: wrong or missing credentials"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authorized says whether r carries the given basic-auth credentials,
// compared in constant time.
func authorized(r *http.Request, username, password string) bool {
	wantUser := sha256.Sum256([]byte(username))
	wantPass := sha256.Sum256([]byte(password))
	user, pass, ok := r.BasicAuth()
	gotUser := sha256.Sum256([]byte(user))
	gotPass := sha256.Sum256([]byte(pass))
	userOK := subtle.ConstantTimeCompare(gotUser[:], wantUser[:])
	passOK := subtle.ConstantTimeCompare(gotPass[:], wantPass[:])
	return ok && userOK&passOK == 1
}
