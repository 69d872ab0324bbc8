package simkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// JSON encodes v as the simulated servers answer: no HTML escaping (a
// Director's or a Cloud Controller's Ruby JSON leaves <, > and & as they
// are), no trailing newline. It panics on a value that cannot be encoded,
// which only a bug in a simulator can produce.
func JSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("simulator: encoding %T: %v", v, err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Write answers status with body, of contentType.
func Write(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
