package sim

import (
	"fmt"
	"net/http"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
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

func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	simkit.Write(w, status, "application/json", body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	writeRawJSON(w, status, simkit.JSON(v))
}

// writeError answers a Director error: {"code":...,"description":...}.
func writeError(w http.ResponseWriter, status, code int, format string, args ...any) {
	writeJSON(w, status, directorError{Code: code, Description: fmt.Sprintf(format, args...)})
}

func writeText(w http.ResponseWriter, status int, text string) {
	simkit.Write(w, status, "text/plain", []byte(text))
}

// endpointNotFound is the Director's answer to an unknown route.
func endpointNotFound(w http.ResponseWriter, r *http.Request) {
	writeText(w, http.StatusNotFound, fmt.Sprintf("Endpoint '%s' not found.", r.URL.Path))
}

func deploymentNotFound(w http.ResponseWriter, name string) {
	writeError(w, http.StatusNotFound, codeDeploymentNotFound, "Deployment '%s' doesn't exist", name)
}
