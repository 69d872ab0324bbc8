package broker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpjson"

	"github.com/pivotal-cf/brokerapi/v11/domain"
)

// Limits bound what one request may hold. Zero fields take the defaults
// (see DefaultLimits).
type Limits struct {
	// MaxBodyBytes bounds a request body: 413 beyond, before it is read
	// when the request says its length. Default 256 KiB.
	MaxBodyBytes int64
	// MaxParametersBytes bounds the parameters of a provision, update or
	// bind, as sent (JSON): 400 beyond. Default 16 KiB.
	MaxParametersBytes int
	// MaxParametersDepth bounds how deeply parameters nest (an object or
	// list in an object is depth 2): 400 beyond. Default 10.
	MaxParametersDepth int
	// MaxIDLength bounds an instance or binding id: 400 beyond. Default 64
	// (a UUID is 36).
	MaxIDLength int
}

// DefaultLimits are the limits a zero Limits field takes.
var DefaultLimits = Limits{MaxBodyBytes: 256 << 10, MaxParametersBytes: 16 << 10, MaxParametersDepth: 10, MaxIDLength: 64}

// maxFieldLength bounds the other strings of a request the broker keeps
// (organization, space and app guids, service and plan ids).
const maxFieldLength = 255

// bodyDepthSlack is how much deeper than the parameters the whole body may
// nest (the body, parameters or context, and a little room).
const bodyDepthSlack = 3

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxBodyBytes > 0 {
		d.MaxBodyBytes = l.MaxBodyBytes
	}
	if l.MaxParametersBytes > 0 {
		d.MaxParametersBytes = l.MaxParametersBytes
	}
	if l.MaxParametersDepth > 0 {
		d.MaxParametersDepth = l.MaxParametersDepth
	}
	if l.MaxIDLength > 0 {
		d.MaxIDLength = l.MaxIDLength
	}
	return d
}

// requestError is a request refused before it reaches the OSB handlers.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func badInput(format string, args ...any) *requestError {
	return &requestError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// guard checks every request before brokerapi sees it: the body's size
// (413), the ids in the path, and for the bodies of provision, update and
// bind: JSON that is an object, fields of the right types and lengths, and
// parameters within their bounds (400, naming what is wrong). brokerapi
// would answer malformed JSON with 422 and Go's own error text.
func guard(l Limits, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkVersion(r.Header.Get("X-Broker-API-Version")); err != nil {
			httpjson.Write(w, err.status, httpjson.Error{Description: err.msg})
			return
		}
		if err := l.check(w, r); err != nil {
			body := httpjson.Error{Description: err.msg}
			if err.status == http.StatusBadRequest {
				body.Error = "BadRequest"
			}
			httpjson.Write(w, err.status, body)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// minAPIMinor is the oldest OSB API version 2.x the broker speaks: 2.14
// (asynchronous bindings' fields, maintenance_info from 2.15 when sent).
const minAPIMinor = 14

// checkVersion refuses a request whose X-Broker-API-Version is missing,
// malformed or not one the broker speaks (412, the spec's error object with
// a description naming the version to use), before anything else is read.
func checkVersion(header string) *requestError {
	refuse := func(why string) *requestError {
		return &requestError{status: http.StatusPreconditionFailed,
			msg: fmt.Sprintf("%s; this broker speaks the Open Service Broker API 2.%d to 2.17: send X-Broker-API-Version: 2.%d or later 2.x", why, minAPIMinor, minAPIMinor)}
	}
	if header == "" {
		return refuse("the X-Broker-API-Version header is missing")
	}
	major, minor, ok := strings.Cut(header, ".")
	n, err := strconv.Atoi(minor)
	switch {
	case !ok || major != "2" || err != nil || n < 0 || len(header) > 16:
		return refuse(fmt.Sprintf("X-Broker-API-Version %q is not a version 2.x", header))
	case n < minAPIMinor:
		return refuse(fmt.Sprintf("X-Broker-API-Version %s is older than 2.%d", header, minAPIMinor))
	}
	return nil
}

// check refuses r, or leaves it ready for the next handler (its body read
// and put back).
func (l Limits) check(w http.ResponseWriter, r *http.Request) *requestError {
	if r.ContentLength > l.MaxBodyBytes {
		return tooLarge(r.ContentLength, l.MaxBodyBytes)
	}
	r.Body = http.MaxBytesReader(w, r.Body, l.MaxBodyBytes)
	kind, err := l.pathKind(r.URL.EscapedPath())
	if err != nil {
		return err
	}
	if kind == "" || (r.Method != http.MethodPut && r.Method != http.MethodPatch) {
		return nil
	}
	body, rerr := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(rerr, &mbe) {
		return tooLarge(-1, l.MaxBodyBytes)
	}
	if rerr != nil {
		return badInput("the request body could not be read")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return l.checkBody(kind, r.Method, body)
}

func tooLarge(got, limit int64) *requestError {
	if got < 0 {
		return &requestError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("the request body is over %d bytes, the most this broker accepts", limit)}
	}
	return &requestError{status: http.StatusRequestEntityTooLarge,
		msg: fmt.Sprintf("the request body is %d bytes; this broker accepts at most %d", got, limit)}
}

// pathKind checks the ids of a /v2/service_instances/{id}[/service_bindings/{bid}]
// path and says what the path names: "instance", "binding" or "" (any other path).
func (l Limits) pathKind(escaped string) (string, *requestError) {
	parts := strings.Split(strings.Trim(escaped, "/"), "/")
	if len(parts) < 3 || parts[0] != "v2" || parts[1] != "service_instances" {
		return "", nil
	}
	if err := idError("instance", parts[2], l.MaxIDLength); err != nil {
		return "", badInput("%v", err)
	}
	if len(parts) >= 5 && parts[3] == "service_bindings" {
		if err := idError("binding", parts[4], l.MaxIDLength); err != nil {
			return "", badInput("%v", err)
		}
		if len(parts) == 5 {
			return "binding", nil
		}
		return "", nil
	}
	if len(parts) == 3 {
		return "instance", nil
	}
	return "", nil
}

// checkBody checks the JSON body of a provision or update (kind
// "instance") or a bind (kind "binding").
func (l Limits) checkBody(kind, method string, body []byte) *requestError {
	if len(bytes.TrimSpace(body)) == 0 {
		return badInput("the request body is empty; a JSON object is expected")
	}
	if err := checkJSON(body, l.MaxParametersDepth+bodyDepthSlack); err != nil {
		return err
	}
	var details any
	switch {
	case kind == "binding":
		details = &domain.BindDetails{}
	case method == http.MethodPatch:
		details = &domain.UpdateDetails{}
	default:
		details = &domain.ProvisionDetails{}
	}
	if err := json.Unmarshal(body, details); err != nil {
		return typeError(err)
	}
	if err := checkStrings(reflect.ValueOf(details).Elem(), ""); err != nil {
		return err
	}
	var raw struct {
		Parameters json.RawMessage `json:"parameters"`
	}
	_ = json.Unmarshal(body, &raw) // checked above
	if err := l.checkParameters(raw.Parameters); err != nil {
		return err
	}
	return required(details)
}

// required refuses a request missing a field the spec makes mandatory (a
// missing field and an empty string alike): service_id, plan_id,
// organization_guid and space_guid of a provision; service_id of an update;
// service_id and plan_id of a bind.
func required(details any) *requestError {
	var fields [][2]string
	switch d := details.(type) {
	case *domain.ProvisionDetails:
		fields = [][2]string{{"service_id", d.ServiceID}, {"plan_id", d.PlanID},
			{"organization_guid", d.OrganizationGUID}, {"space_guid", d.SpaceGUID}}
	case *domain.UpdateDetails:
		fields = [][2]string{{"service_id", d.ServiceID}}
	case *domain.BindDetails:
		fields = [][2]string{{"service_id", d.ServiceID}, {"plan_id", d.PlanID}}
	}
	for _, f := range fields {
		if f[1] == "" {
			return badInput("field %s is required: a non-empty string", f[0])
		}
	}
	return nil
}

// checkParameters checks a request's parameters: absent, null or an object
// of at most MaxParametersBytes nesting at most MaxParametersDepth.
func (l Limits) checkParameters(raw json.RawMessage) *requestError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] != '{' {
		return badInput("parameters must be a JSON object")
	}
	if len(raw) > l.MaxParametersBytes {
		return badInput("parameters are %d bytes; this broker accepts at most %d", len(raw), l.MaxParametersBytes)
	}
	if d := depthOf(raw); d > l.MaxParametersDepth {
		return badInput("parameters nest %d levels deep; this broker accepts at most %d", d, l.MaxParametersDepth)
	}
	var params any
	if err := json.Unmarshal(raw, &params); err != nil {
		return badInput("parameters must be a JSON object")
	}
	return noInterpolation(params, "")
}

// noInterpolation refuses BOSH's variable syntax, "((" or "))", in any key
// or string value of the parameters (path names where, as a.b[2]): the
// Director would resolve ((name)) from its config server (CredHub) into the
// tenant's deployment, whatever template printed it.
func noInterpolation(v any, path string) *requestError {
	bosh := func(s string) bool { return strings.Contains(s, "((") || strings.Contains(s, "))") }
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			at := join(path, k)
			if bosh(k) {
				return badInput("parameter key %s: (( and )) are BOSH's variable syntax, which the Director would resolve; not accepted", at)
			}
			if err := noInterpolation(t[k], at); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range t {
			if err := noInterpolation(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case string:
		if bosh(t) {
			return badInput("parameter %s: (( and )) are BOSH's variable syntax, which the Director would resolve; not accepted", path)
		}
	}
	return nil
}
