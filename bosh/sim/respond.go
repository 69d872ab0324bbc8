package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// Director error codes the simulator uses.
const (
	codeTaskNotFound        = 10000
	codeTaskUnexpectedState = 10001
	codeValidationType      = 40000
	codeMissingField        = 40001
	codeDeploymentNotFound  = 70000
	codeBadManifest         = 440001
	codeNotRunning          = 400007
	codeDirector            = 100 // the Director's generic code, lock errors among them
	codeScope               = 600000
	codeContextIDTooLong    = 190024
)

// directorError is the JSON body of the Director's errors.
type directorError struct {
	Code        int    `json:"code"`
	Description string `json:"description"`
}

// mustJSON encodes v as the Director does: no HTML escaping, no trailing
// newline. It panics on values that cannot be encoded, which only a bug in
// the simulator can produce.
func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("bosh director simulator: encoding %T: %v", v, err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	writeRawJSON(w, status, mustJSON(v))
}

// writeError answers a Director error: {"code":...,"description":...}.
func writeError(w http.ResponseWriter, status, code int, format string, args ...any) {
	writeJSON(w, status, directorError{Code: code, Description: fmt.Sprintf(format, args...)})
}

func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(text))
}

// endpointNotFound is the Director's answer to an unknown route.
func endpointNotFound(w http.ResponseWriter, r *http.Request) {
	writeText(w, http.StatusNotFound, fmt.Sprintf("Endpoint '%s' not found.", r.URL.Path))
}

func deploymentNotFound(w http.ResponseWriter, name string) {
	writeError(w, http.StatusNotFound, codeDeploymentNotFound, "Deployment '%s' doesn't exist", name)
}
