package httpjson

import (
	"encoding/json"
	"net/http"
)

// Error is the JSON body of an error answer, shaped like OSB's error
// object: an optional machine-readable code and a description for people.
type Error struct {
	Error       string `json:"error,omitempty"`
	Description string `json:"description"`
}

// Write answers with status and v as indented JSON.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// WriteError answers with status and an Error of code (may be empty) and description.
func WriteError(w http.ResponseWriter, status int, code, description string) {
	Write(w, status, Error{Error: code, Description: description})
}
