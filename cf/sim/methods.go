package sim

import (
	"net/http"
	"slices"
)

// railsMethods are the HTTP methods Rails (ActionDispatch::Request's
// HTTP_METHODS) knows: a /v3 request with another method is answered 405
// with an empty text/html body (ActionController::UnknownHttpMethod, which
// CC's exceptions_app has no route for). A known method on a path that
// does not take it is a routing error: 404 CF-NotFound "Unknown request".
var railsMethods = []string{
	"OPTIONS", "GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "CONNECT", // RFC 2616
	"PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", // RFC 2518
	"VERSION-CONTROL", "REPORT", "CHECKOUT", "CHECKIN", "UNCHECKOUT", "MKWORKSPACE", "UPDATE", "LABEL", "MERGE",
	"BASELINE-CONTROL", "MKACTIVITY", // RFC 3253
	"ORDERPATCH", // RFC 3648
	"ACL",        // RFC 3744
	"SEARCH",     // RFC 5323
	"MKCALENDAR", // RFC 4791
	"PATCH",      // RFC 5789
}

// unmatched answers a request no route takes: 405 for a /v3 request with
// a method Rails does not know, else CC's 404.
func unmatched(w http.ResponseWriter, r *http.Request) {
	if !slices.Contains(railsMethods, r.Method) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	writeError(w, http.StatusNotFound, errNotFound)
}

// tokenMethodNotAllowed is UAA's answer to /oauth/token with another
// method than POST (HttpMethodNotSupportedAdvice through
// DefaultWebResponseExceptionTranslator: MethodNotAllowed).
func tokenMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed",
		"error_description": "Request method '" + r.Method + "' is not supported"})
}
