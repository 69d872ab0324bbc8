package basicauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
)

// unauthorized is the JSON body of a 401, shaped like an OSB error (indented
// as the broker's other answers are).
const unauthorized = "{\n  \"description\": \"unauthorized: wrong or missing credentials\"\n}\n"

// Require wraps next so that it only answers requests carrying the given
// basic-auth credentials; any other request gets 401 with a JSON body.
func Require(username, password string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Authorized(r, username, password) {
			deny(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// deny answers 401, asking for basic auth.
func deny(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="blacksmith"`)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(unauthorized))
}

// Authorized says whether r carries the given basic-auth credentials,
// compared in constant time.
func Authorized(r *http.Request, username, password string) bool {
	wantUser := sha256.Sum256([]byte(username))
	wantPass := sha256.Sum256([]byte(password))
	user, pass, ok := r.BasicAuth()
	gotUser := sha256.Sum256([]byte(user))
	gotPass := sha256.Sum256([]byte(pass))
	userOK := subtle.ConstantTimeCompare(gotUser[:], wantUser[:])
	passOK := subtle.ConstantTimeCompare(gotPass[:], wantPass[:])
	return ok && userOK&passOK == 1
}
