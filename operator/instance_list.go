package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpjson"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
)

// InstanceList returns a page of the instance list: reconciler.Views.List
// over the Manager.
type InstanceList func(ctx context.Context, q reconciler.InstanceQuery) (reconciler.InstancePage, error)

// maxParamLength bounds each query parameter of GET /b/instances.
const maxParamLength = 255

// listParams are the query parameters GET /b/instances takes.
var listParams = []string{"q", "state", "plan", "director", "limit", "after"}

// InstanceListHandler serves, behind the daemon's credentials:
//
//	GET /b/instances?q=&state=&plan=&director=&limit=&after=   a page of the instances, in id order
//
// q searches the instance id, deployment, organization and space (guids,
// and names when the platform sent them); state is one of
// reconciler.ListStates; limit is 1 to reconciler.MaxListLimit (default
// reconciler.DefaultListLimit); after is the previous page's next. Any
// other parameter, a repeated one or one longer than 255 characters
// answers 400 naming it. list nil answers 503.
func InstanceListHandler(list InstanceList, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			httpjson.Write(w, http.StatusMethodNotAllowed, httpjson.Error{Description: "GET /b/instances only"})
			return
		}
		if list == nil {
			httpjson.Write(w, http.StatusServiceUnavailable, httpjson.Error{Description: "the reconciler is not available"})
			return
		}
		q, err := listQuery(r)
		if err != nil {
			httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: err.Error()})
			return
		}
		page, err := list(r.Context(), q)
		switch {
		case errors.Is(err, reconciler.ErrBadQuery):
			httpjson.Write(w, http.StatusBadRequest, httpjson.Error{Error: "BadRequest", Description: err.Error()})
		case err != nil:
			log.Warn("operator request failed", "what", "listing instances", "status", http.StatusBadGateway, "error", err)
			httpjson.Write(w, http.StatusBadGateway, httpjson.Error{Description: "listing instances: " + err.Error()})
		default:
			httpjson.Write(w, http.StatusOK, page)
		}
	})
}

// listQuery reads and checks the query of GET /b/instances.
func listQuery(r *http.Request) (reconciler.InstanceQuery, error) {
	values := r.URL.Query()
	for name, v := range values {
		switch {
		case !slices.Contains(listParams, name):
			return reconciler.InstanceQuery{}, fmt.Errorf("unknown parameter %.64q: want %s", name, strings.Join(listParams, ", "))
		case len(v) > 1:
			return reconciler.InstanceQuery{}, fmt.Errorf("parameter %s is given more than once", name)
		case len(v[0]) > maxParamLength:
			return reconciler.InstanceQuery{}, fmt.Errorf("parameter %s is longer than %d characters", name, maxParamLength)
		}
	}
	q := reconciler.InstanceQuery{Search: values.Get("q"), State: values.Get("state"), Plan: values.Get("plan"),
		Director: values.Get("director"), After: values.Get("after")}
	if q.State != "" && !slices.Contains(reconciler.ListStates, q.State) {
		return q, fmt.Errorf("state=%q: want one of %s", q.State, strings.Join(reconciler.ListStates, ", "))
	}
	if v := values.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > reconciler.MaxListLimit {
			return q, fmt.Errorf("limit=%q: want 1 to %d", v, reconciler.MaxListLimit)
		}
		q.Limit = n
	}
	return q, nil
}
