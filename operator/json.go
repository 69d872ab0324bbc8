package operator

import (
	"encoding/json"
	"net/http"
)

// errorBody is the JSON body of an error answer, shaped like OSB's.
type errorBody struct {
	Error       string `json:"error,omitempty"`
	Description string `json:"description"`
}

// writeJSON answers with status and v as indented JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
