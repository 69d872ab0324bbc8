package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// Binding rotation (OSB 2.17): a per_binding plan says binding_rotatable in
// the catalog; a bind whose body names a predecessor_binding_id (and may
// carry nothing else) creates a successor binding with secrets of its own,
// the predecessor's app and parameters, while the predecessor keeps working
// until it is unbound. brokerapi knows neither field: rotation fills the
// bind's body from the instance's record and the predecessor's document
// before brokerapi reads it, and the catalog's answer gets the field
// (rotator).

// predecessorKey carries a bind's predecessor_binding_id to Bind.
type predecessorKey struct{}

// predecessorOf is the bind's predecessor_binding_id ("": none).
func predecessorOf(ctx context.Context) string {
	s, _ := ctx.Value(predecessorKey{}).(string)
	return s
}

// rotatable says whether a plan's bindings rotate: a per_binding plan's do
// (a successor gets a user of its own beside its predecessor's).
func rotatable(p catalog.Plan) bool { return p.PerBinding() }

// rotator serves binding rotation where brokerapi does not, and judges a
// successor binding's predecessor for Bind.
type rotator struct {
	catalog *catalog.Catalog
	store   Store
	limits  Limits // Options.Limits, defaults filled in
	report  reporter
}

// handler serves the two parts brokerapi does not: binding_rotatable in
// GET /v2/catalog, and a bind naming a predecessor_binding_id.
func (ro *rotator) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v2/catalog":
			ro.catalogWithRotation(w, r, next)
		case r.Method == http.MethodPut && isBindingPath(r.URL.Path):
			next.ServeHTTP(w, ro.successorRequest(r))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// isBindingPath says whether path is /v2/service_instances/{id}/service_bindings/{bid}.
func isBindingPath(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	return len(parts) == 5 && parts[0] == "v2" && parts[1] == "service_instances" && parts[3] == "service_bindings"
}

// successorRequest is r, when its body names a predecessor_binding_id, with
// the body completed from the instance's record (service_id, plan_id) and
// the predecessor's document (app_guid, bind_resource, parameters) where it
// does not say them, and the predecessor in its context for Bind. Any other
// request, or one that cannot be read (the guard answers it), is r as it is.
func (ro *rotator) successorRequest(r *http.Request) *http.Request {
	limit := ro.limits.MaxBodyBytes
	if limit <= 0 || r.ContentLength > limit {
		return r
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || int64(len(body)) > limit {
		return r
	}
	var fields map[string]any
	if json.Unmarshal(body, &fields) != nil {
		return r
	}
	pred, _ := fields["predecessor_binding_id"].(string)
	if pred == "" {
		return r
	}
	r = r.WithContext(context.WithValue(r.Context(), predecessorKey{}, pred))
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	id := parts[2]
	if idError("instance", id, ro.limits.MaxIDLength) != nil || idError("binding", pred, ro.limits.MaxIDLength) != nil {
		return r // the guard refuses the path; Bind the predecessor
	}
	rec, err := ro.store.Record(r.Context(), id)
	if err == nil && rec != nil {
		setIfAbsent(fields, "service_id", rec.ServiceID)
		setIfAbsent(fields, "plan_id", rec.PlanID)
	}
	if prev, ok, err := ro.store.Secret(r.Context(), bindingPath(id, pred)); err == nil && ok {
		if app, _ := prev["app_guid"].(string); app != "" {
			setIfAbsent(fields, "app_guid", app)
			setIfAbsent(fields, "bind_resource", map[string]any{"app_guid": app})
		}
		if params, ok := prev["parameters"].(map[string]any); ok && len(params) > 0 {
			setIfAbsent(fields, "parameters", params)
		}
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return r
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(out)), int64(len(out))
	r.Header.Set("Content-Length", strconv.Itoa(len(out)))
	return r
}

func setIfAbsent(m map[string]any, key string, v any) {
	if _, ok := m[key]; !ok {
		m[key] = v
	}
}

// catalogWithRotation serves next's catalog with binding_rotatable: true on
// the plans whose bindings rotate.
func (ro *rotator) catalogWithRotation(w http.ResponseWriter, r *http.Request, next http.Handler) {
	rec := &bufferedWriter{header: http.Header{}, status: http.StatusOK}
	next.ServeHTTP(rec, r)
	body := rec.body.Bytes()
	if rec.status == http.StatusOK {
		var cat struct {
			Services []map[string]any `json:"services"`
		}
		if json.Unmarshal(body, &cat) == nil {
			for _, svc := range cat.Services {
				plans, _ := svc["plans"].([]any)
				for _, p := range plans {
					plan, _ := p.(map[string]any)
					id, _ := plan["id"].(string)
					if _, cp, ok := ro.catalog.Plan(id); ok && rotatable(cp) {
						plan["binding_rotatable"] = true
					}
				}
			}
			if out, err := json.Marshal(cat); err == nil {
				body = append(out, '\n')
			}
		}
	}
	maps.Copy(w.Header(), rec.header)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.status)
	_, _ = w.Write(body)
}

// bufferedWriter keeps an answer to change it before it is sent.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedWriter) Header() http.Header         { return w.header }
func (w *bufferedWriter) WriteHeader(code int)        { w.status = code }
func (w *bufferedWriter) Write(p []byte) (int, error) { return w.body.Write(p) }

// checkPredecessor refuses a successor binding (400) whose plan does not
// rotate bindings, or whose predecessor is itself, or not a live binding of
// the instance.
func (ro *rotator) checkPredecessor(ctx context.Context, id, bid, pred string, plan catalog.Plan) error {
	if !rotatable(plan) {
		return badRequest("plan %s does not rotate bindings (binding_rotatable is false): bind without predecessor_binding_id", plan.ID)
	}
	if pred == bid {
		return badRequest("predecessor_binding_id is the binding's own id")
	}
	prev, ok, err := ro.store.Secret(ctx, bindingPath(id, pred))
	if err != nil {
		return ro.report.internal("could not read the predecessor binding", err, "instance", id, "binding", pred)
	}
	if !ok || !live(prev) || opOf(prev).State == stateInProgress {
		return badRequest("predecessor_binding_id %q is no binding of this instance in effect", pred)
	}
	return nil
}
