package operator

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// Bounds of POST /b/upgrades.
const (
	// maxNamedInstances bounds ?instance= (repeated).
	maxNamedInstances = 100
)

// upgradeParams are the query parameters POST /b/upgrades takes: a fleet
// upgrade changes deployments, so a misspelt one (which would widen the
// scope to every instance) is refused rather than ignored.
var upgradeParams = []string{"dry_run", "service", "plan", "director", "instance", "allow",
	"canaries", "max_in_flight", "max_failures", "attempt_limit"}

// upgradeQuery reads the request of POST /b/upgrades: ?dry_run=BOOL, the
// scope (?service=, ?plan=, ?director=, each at most once; ?instance=,
// repeated up to maxNamedInstances times) and the rules (?canaries=,
// ?max_in_flight=, ?max_failures=, ?attempt_limit=: integers, each at most
// once; their bounds are the Manager's).
func upgradeQuery(q url.Values) (reconciler.UpgradeRequest, error) {
	req := reconciler.UpgradeRequest{Trigger: report.UpgradeByOperator}
	if err := knownOnly(q); err != nil {
		return req, err
	}
	if v, given, err := once(q, "dry_run"); err != nil {
		return req, err
	} else if given {
		if req.DryRun, err = strconv.ParseBool(v); err != nil {
			return req, fmt.Errorf("dry_run=%q: want true or false", v)
		}
	}
	for _, f := range []struct {
		name string
		to   *string
	}{{"service", &req.Scope.Service}, {"plan", &req.Scope.Plan}, {"director", &req.Scope.Director}} {
		v, given, err := once(q, f.name)
		if err == nil && given {
			err = checkID(f.name, v, false)
		}
		if err != nil {
			return req, err
		}
		*f.to = v
	}
	if err := namedInstances(q["instance"], &req.Scope); err != nil {
		return req, err
	}
	if v, given, err := once(q, "allow"); err != nil {
		return req, err
	} else if given {
		if req.Allow, err = operation.ParseClasses(v); err != nil {
			return req, fmt.Errorf("allow=%q: %w", v, err)
		}
	}
	for _, f := range []struct {
		name string
		to   **int
	}{{"canaries", &req.Canaries}, {"max_in_flight", &req.MaxInFlight}, {"max_failures", &req.MaxFailures}, {"attempt_limit", &req.AttemptLimit}} {
		v, given, err := once(q, f.name)
		if err != nil {
			return req, err
		}
		if given {
			n, err := strconv.Atoi(v)
			if err != nil {
				return req, fmt.Errorf("%s=%q: want an integer", f.name, v)
			}
			*f.to = &n
		}
	}
	return req, nil
}

// namedInstances checks the ids of ?instance= and puts them in scope.
func namedInstances(ids []string, scope *report.UpgradeScope) error {
	if len(ids) > maxNamedInstances {
		return fmt.Errorf("instance= given %d times: at most %d", len(ids), maxNamedInstances)
	}
	for _, id := range ids {
		if err := checkID("instance", id, false); err != nil {
			return err
		}
	}
	if len(ids) > 0 {
		scope.Instances = slices.Clone(ids)
	}
	return nil
}

// knownOnly refuses a query parameter POST /b/upgrades does not take.
func knownOnly(q url.Values) error {
	var unknown []string
	for name := range q {
		if !slices.Contains(upgradeParams, name) {
			unknown = append(unknown, strconv.Quote(name))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("unknown query parameter %s: POST /b/upgrades takes %s", strings.Join(unknown, ", "), strings.Join(upgradeParams, ", "))
}

// once is the value of query parameter name; given false when it is
// absent, an error when it is given more than once.
func once(q url.Values, name string) (v string, given bool, err error) {
	values := q[name]
	switch len(values) {
	case 0:
		return "", false, nil
	case 1:
		return values[0], true, nil
	}
	return "", false, fmt.Errorf("%s= given %d times: at most once", name, len(values))
}
