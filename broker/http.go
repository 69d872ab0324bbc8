package broker

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpjson"

	"github.com/pivotal-cf/brokerapi/v11"

	"github.com/blacksmith-reconciler/blacksmith/internal/basicauth"
)

// Handler serves the Open Service Broker API under /v2/ behind the broker's
// basic-auth credentials (401 otherwise); any other path gets 404. Every
// answer is counted in the broker's metrics (see Observe) and put in the
// spec's shape (shapeAnswers: one error object, last_operation's hints).
func (b *Broker) Handler() http.Handler {
	// brokerapi's own log would repeat each error (with the request's
	// parameters); the broker logs what the operator needs itself.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux := http.NewServeMux()
	mux.Handle("/v2/", b.rotate.handler(guard(b.opts.Limits, brokerapi.NewWithOptions(b, quiet))))
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		httpjson.Write(w, http.StatusNotFound, httpjson.Error{Description: "no such endpoint"})
	}))
	return b.Observe(echoRequestIdentity(shapeAnswers(b.log, basicauth.Require(b.opts.Username, b.opts.Password, mux))))
}

// echoRequestIdentity sends X-Broker-API-Request-Identity back on every
// answer (the spec's SHOULD; brokerapi does on its own, not on the answers
// given before it: 401, 412, 400, 404), when it is a plain value of at most
// 255 characters.
func echoRequestIdentity(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("X-Broker-API-Request-Identity"); id != "" && len(id) <= maxFieldLength &&
			!strings.ContainsFunc(id, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
			w.Header().Set("X-Broker-API-Request-Identity", id)
		}
		next.ServeHTTP(w, r)
	})
}

// Observe counts every answer of next in the broker's request metrics and
// logs it, by operation (named from the route) and status code. Handler
// uses it; the daemon wraps the operator's /b/reconcile in it too, whose
// requests count as operations "reconcile" (POST) and "reconcile_status"
// (GET), next to the OSB ones.
func (b *Broker) Observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		op := operationOf(r.Method, r.URL.Path)
		elapsed := time.Since(start)
		b.opts.Metrics.request(op, sw.status, elapsed.Seconds())
		level := slog.LevelDebug
		if sw.status >= 400 {
			level = slog.LevelInfo
		}
		b.log.Log(r.Context(), level, "request", "operation", op, "method", r.Method,
			"path", r.URL.Path, "status", sw.status, "duration", elapsed)
	})
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

// WriteHeader remembers the first status code and writes it.
func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// operationOf names the operation a request asks for, from its route.
func operationOf(method, path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) == 2 && parts[0] == "v2" && parts[1] == "catalog":
		return opCatalog
	case len(parts) == 2 && parts[0] == "b" && parts[1] == "reconcile": // the operator's, behind Observe
		if method == http.MethodGet {
			return opStatus
		}
		return opReconcile
	case len(parts) == 2 && parts[0] == "b" && parts[1] == "runs":
		return opRuns
	case len(parts) >= 1 && parts[0] == "dashboard":
		return opDashboard
	case len(parts) == 3 && parts[0] == "b" && parts[1] == "instances":
		return opInstance
	case len(parts) == 4 && parts[0] == "b" && parts[1] == "instances" && parts[3] == "restore":
		return opRestore
	case len(parts) == 4 && parts[0] == "b" && parts[1] == "instances" && parts[3] == "adopt":
		return opAdopt
	case len(parts) < 3 || parts[0] != "v2" || parts[1] != "service_instances":
		return opUnknown
	case len(parts) == 3:
		return byMethod(method, opGetInstance, opProvision, opUpdate, opDeprovision)
	case len(parts) == 4 && parts[3] == "last_operation":
		return opLastOperation
	case len(parts) == 5 && parts[3] == "service_bindings":
		return byMethod(method, opGetBinding, opBind, opUnknown, opUnbind)
	case len(parts) == 6 && parts[3] == "service_bindings" && parts[5] == "last_operation":
		return opBindingLastOp
	}
	return opUnknown
}

// byMethod picks the operation of a GET, PUT, PATCH or DELETE.
func byMethod(method, get, put, patch, del string) string {
	switch method {
	case http.MethodGet:
		return get
	case http.MethodPut:
		return put
	case http.MethodPatch:
		return patch
	case http.MethodDelete:
		return del
	}
	return opUnknown
}
