package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"
)

// Errors the platform user sees. brokerapi turns a *FailureResponse into
// its status code and {"error": ..., "description": ...}; anything else
// would reach the user as a 500 carrying the operator's detail, so every
// OSB handler of Broker (and every part's method it answers with) returns
// only these, each with its error code (failure). The answers that reach
// the platform are put in one shape once more (shapeAnswers).
var (
	errNotFound         = failure(errors.New("instance does not exist"), http.StatusNotFound, "InstanceNotFound")
	errBindingNotFound  = failure(errors.New("binding does not exist"), http.StatusNotFound, "BindingNotFound")
	errInstanceConflict = failure(errors.New("an instance with this id already exists with different attributes"),
		http.StatusConflict, "InstanceConflict")
	errBindingConflict = failure(errors.New("a binding with this id already exists with different attributes"),
		http.StatusConflict, "BindingConflict")
	errNotBindable = failure(errors.New("this service is not bindable"), http.StatusBadRequest, "NotBindable")
)

// failure is an error the platform user sees: err's text as the
// description, status, and code as the OSB error code (one word in camel
// case, the body's "error").
func failure(err error, status int, code string) *apiresponses.FailureResponse {
	return apiresponses.NewFailureResponseBuilder(err, status, code).WithErrorKey(code).Build()
}

// badRequest is a 400 telling the user what is wrong with the request.
func badRequest(format string, args ...any) error {
	return failure(fmt.Errorf(format, args...), http.StatusBadRequest, "BadRequest")
}

// concurrency is the OSB 422 ConcurrencyError: an operation of the given
// type (provision, update, deprovision...) or description is in progress on
// the instance.
func concurrency(what string) error {
	return failure(fmt.Errorf("%s is in progress on this instance; try again when it is done", withArticle(what)),
		http.StatusUnprocessableEntity, "ConcurrencyError")
}

// withArticle is what with "a" or "an" before it, unless it has one ("the
// provision", "another operation").
func withArticle(what string) string {
	first, _, _ := strings.Cut(what, " ")
	switch {
	case what == "":
		return "an operation"
	case first == "a" || first == "an" || first == "the" || first == "another":
		return what
	case strings.ContainsAny(what[:1], "aeiou"):
		return "an " + what
	}
	return "a " + what
}

// maintenanceConflict is the OSB 422 MaintenanceInfoConflict.
func maintenanceConflict(err error) error {
	return failure(err, http.StatusUnprocessableEntity, "MaintenanceInfoConflict")
}

// errAwaitsAdoption is the 422 of a bind, update or deprovision of an
// instance the reconciler adopted from a Director and no operator has
// confirmed: what a Director runs must not move what the broker owns.
var errAwaitsAdoption = failure(
	errors.New("this instance was found on a BOSH Director and awaits an operator's confirmation (blacksmith adopt); until then it cannot be bound, updated or deleted"),
	http.StatusUnprocessableEntity, "AwaitsAdoption")

// errRetiring is the 422 of a bind or update of an instance whose VMs the
// reconciler stopped because the platform did not list it (an orphan
// deployment's retirement): deploying it would neither start it nor be
// wanted; the next run that finds the platform listing it starts it.
var errRetiring = failure(
	errors.New("this instance's VMs are stopped: the platform did not list it and the broker is retiring it; it is started again once the platform lists it (within one reconciler run); please try again then"),
	http.StatusUnprocessableEntity, "InstanceRetiring")

// limitReached is a 422 telling the user which limit refused the instance.
func limitReached(what string, limit int) error {
	return failure(fmt.Errorf("the %s allows at most %d instances and that many exist; delete one or ask your operator", what, limit),
		http.StatusUnprocessableEntity, "QuotaExceeded")
}

// reporter turns what went wrong into the answer the platform user sees,
// the detail going to the operator's log once.
type reporter struct {
	log *slog.Logger
}

// internal logs err for the operator, once, and returns the user a 500 that
// says what failed without the operator's detail.
func (r reporter) internal(msg string, err error, attrs ...any) error {
	r.log.Error(msg, append(attrs, "error", err)...)
	return failure(errors.New(msg+"; the broker's log has the details"), http.StatusInternalServerError, "InternalError")
}

// renderFailed answers a template that could not be rendered. With
// parameters the platform user's values are the likely cause (the catalog
// renders every template without any when it loads): 400, the detail in the
// operator's log. Without, it is the broker's own fault: 500.
func (r reporter) renderFailed(what, planID string, params map[string]any, err error) error {
	if len(params) == 0 {
		return r.internal("the plan's "+what+" template could not be rendered", err, "plan", planID)
	}
	r.log.Warn("the plan's "+what+" template could not be rendered with the request's parameters",
		"plan", planID, "error", err)
	return badRequest("the parameters could not be applied to the plan's %s template; check their types and values", what)
}

// guardRefused is the 422 of an operation the change guard refused before
// anything was deployed: its description names each change.
func guardRefused(err error) error {
	return failure(err, http.StatusUnprocessableEntity, "ChangeRefused")
}

// directorUnavailable is the answer when the Director could not preview
// an operation: nothing was written or deployed, the platform may retry.
func directorUnavailable(opType, director string) error {
	return failure(fmt.Errorf("%s refused: the BOSH Director %q could not preview it; nothing was changed, please try again later", opType, director),
		http.StatusServiceUnavailable, "DirectorUnavailable")
}

// secretsNotHeld is the 422 of an operation on an instance whose secrets
// the broker does not hold (its credentials are the Director's
// configuration-server variables, or Vault lost them): nothing is
// generated over what runs.
func secretsNotHeld(opType string) error {
	return failure(fmt.Errorf("%s refused: this instance's credentials are not held by the broker (they live in the BOSH Director's "+
		"configuration server, or were lost); nothing was changed: ask your operator", opType),
		http.StatusUnprocessableEntity, "SecretsNotHeld")
}
