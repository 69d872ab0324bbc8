package sim

import (
	"net/http"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// cfError is one error of the Cloud Controller's v3 error object.
type cfError struct {
	Code   int    `json:"code"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

// Cloud Controller errors the simulator answers, as errors/v2.yml defines
// them (code, name, HTTP status, message).
var (
	errInvalidAuthToken  = cfError{1000, "CF-InvalidAuthToken", "Invalid Auth Token"}
	errNotFound          = cfError{10000, "CF-NotFound", "Unknown request"}
	errNotAuthenticated  = cfError{10002, "CF-NotAuthenticated", "Authentication error"}
	errRateLimitExceeded = cfError{10013, "CF-RateLimitExceeded", "Rate Limit Exceeded"}
	errUnknown           = cfError{10001, "UnknownError", "An unknown error occurred."}
	errUnavailable       = cfError{10015, "CF-ServiceUnavailable", "Database connection failure"}
)

func badQuery(detail string) cfError {
	return cfError{10005, "CF-BadQueryParameter", "The query parameter is invalid: " + detail}
}

func resourceNotFound(what string) cfError {
	return cfError{10010, "CF-ResourceNotFound", what + " not found"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	simkit.Write(w, status, "application/json; charset=utf-8", simkit.JSON(v))
}

// writeError answers the v3 error object {"errors":[{code,title,detail}]}.
func writeError(w http.ResponseWriter, status int, e cfError) {
	writeJSON(w, status, map[string][]cfError{"errors": {e}})
}
