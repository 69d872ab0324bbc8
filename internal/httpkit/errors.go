package httpkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

// ErrNoSlot is matched by a Send whose context ended before a slot was free.
var ErrNoSlot = errors.New("waiting for a free request slot")

// TooLargeError is an answer over the bound its caller set. Each client
// wraps it in an error of its own, matching its own sentinel.
type TooLargeError struct {
	// Method and Endpoint are the request's method and route template.
	Method, Endpoint string
	// Limit is the bound, in bytes.
	Limit int64
}

// Error names the request and the bound, e.g. "the answer to GET /v3/x is
// over 1048576 bytes".
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the answer to %s %s is over %d bytes", e.Method, e.Endpoint, e.Limit)
}

// MaxErrorText bounds, in bytes, the texts DecodeJSON's errors quote.
const MaxErrorText = 512

// DecodeJSON decodes body into out. Its error's text is cut to MaxErrorText
// bytes: encoding/json quotes parts of the input, a long number for one.
func DecodeJSON(body []byte, out any) error {
	if err := json.Unmarshal(body, out); err != nil {
		return errors.New(textcut.Marked(err.Error(), MaxErrorText, "..."))
	}
	return nil
}

// CodeClass turns a status into its class for a metric's label: 404 into
// "4xx", and 0 (no answer) or any other out of 100..599 into "error".
func CodeClass(status int) string {
	if status < 100 || status > 599 {
		return "error"
	}
	return strconv.Itoa(status/100) + "xx"
}
