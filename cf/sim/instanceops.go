package sim

import (
	"context"
	"net/http"
	"time"
)

// Polling bounds, as CC's configuration sets them.
const (
	// DefaultPollInterval is broker_client_default_async_poll_interval_seconds.
	DefaultPollInterval = 60 * time.Second
	maxPollInterval     = 24 * time.Hour      // broker_client_max_async_poll_interval_seconds
	maxPollDuration     = 10080 * time.Minute // broker_client_max_async_poll_duration_minutes
)

// instanceOp is one broker operation on a service instance, as CC's
// create, update and delete jobs run it: the first request, then polling
// last_operation until the broker says succeeded or failed.
type instanceOp struct {
	kind       string // OpCreate, OpUpdate or OpDelete
	instance   Instance
	broker     Broker
	serviceID  string  // the offering's catalog id
	planID     string  // the plan's catalog id (the instance's current one)
	first      osbCall // the provision, update or deprovision
	maxPolling time.Duration
	succeed    func(description string) // applies the operation to the foundation
}

// verb is the job's operation as CC's timeout message names it; label is
// UnableToPerform's name of the operation.
func (op instanceOp) verb() (verb, label string) {
	switch op.kind {
	case OpCreate:
		return "provision", "create managed"
	case OpUpdate:
		return "update", "update"
	}
	return "deprovision", "delete"
}

// instanceRunner runs instance operations against their brokers.
type instanceRunner struct {
	f        *Foundation
	client   *brokerClient
	user     string        // the originating identity's user_id
	interval time.Duration // the least time between polls
	orphans  *orphanMitigator
}

// run is the job: its error is the job's, and the instance's last
// operation says what happened.
func (r *instanceRunner) run(ctx context.Context, op instanceOp) *cfError {
	start := time.Now()
	a, err := r.client.instanceCall(ctx, op.broker, r.user, op.first)
	if err == nil {
		err = firstAnswerError(op.kind, a)
	}
	if err != nil {
		if op.kind == OpCreate && orphaned(a, err, provisionSpecial) {
			r.orphans.deprovision(op.broker, op.instance.GUID, op.serviceID, op.planID)
		}
		if op.kind == OpDelete {
			e := *err // never the shared error values
			e.Detail = "Service instance " + op.instance.Name + ": " + e.Detail
			err = &e
		}
		r.record(op, StateFailed, err.Detail)
		return err
	}
	s := readState(a)
	if a.status != http.StatusAccepted {
		op.succeed(s.Description)
		return nil
	}
	r.record(op, StateInProgress, s.Description)
	return r.poll(ctx, op, start, s.Operation)
}

// firstAnswerError is the error of the first request's answer, nil when
// the broker accepted it (done or in progress).
func firstAnswerError(kind string, a osbAnswer) *cfError {
	switch {
	case kind == OpDelete && a.status == http.StatusGone:
		return nil
	case a.status == http.StatusOK, a.status == http.StatusAccepted, kind == OpCreate && a.status == http.StatusCreated:
		return answerError(osbAnswer{status: http.StatusOK, body: a.body})
	case a.status < 400:
		e := brokerBadResponse(a.status, a.body)
		return &e
	}
	return answerError(a)
}

// poll asks last_operation (at once, then every interval or Retry-After,
// capped) until the broker ends the operation or the plan's maximum
// polling duration would pass.
func (r *instanceRunner) poll(ctx context.Context, op instanceOp, start time.Time, operation string) *cfError {
	verb, label := op.verb()
	return lastOperationPoll{client: r.client, broker: op.broker, user: r.user, path: "/v2/service_instances/" + op.instance.GUID,
		query: map[string][]string{"plan_id": {op.planID}, "service_id": {op.serviceID}}, interval: r.interval,
		start: start, limit: op.maxPolling,
		read: func(a osbAnswer) (bool, *cfError) {
			done, e := r.read(op, a)
			return done || e != nil, e
		},
		timedOut: func() { r.record(op, StateFailed, "Service Broker failed to "+verb+" within the required time.") },
		closed:   &cfError{10009, "CF-UnableToPerform", label + " could not be completed: the simulator was closed"},
	}.run(ctx, operation)
}

// read applies one last_operation answer; done when the operation ended.
func (r *instanceRunner) read(op instanceOp, a osbAnswer) (bool, *cfError) {
	var s osbState
	if a.status != http.StatusGone {
		if e := answerError(a); e != nil {
			r.record(op, StateFailed, e.Detail)
			return true, e
		}
		s = readState(a)
	}
	if s.State == "" && op.kind == OpDelete { // no state (a 410) ends a delete
		s.State = StateSucceeded
	}
	switch s.State {
	case StateSucceeded:
		op.succeed(s.Description)
		return true, nil
	case StateFailed:
		_, label := op.verb()
		r.record(op, StateFailed, s.Description)
		return true, &cfError{10009, "CF-UnableToPerform", label + " could not be completed: " + s.Description}
	case StateInProgress, "":
		r.record(op, StateInProgress, s.Description)
		return false, nil
	}
	r.record(op, StateFailed, errBrokerMalformed.Detail)
	return true, &errBrokerMalformed
}

// record sets the instance's last operation (of the op's type) to state.
func (r *instanceRunner) record(op instanceOp, state, description string) {
	_ = r.f.updateInstance(op.instance.GUID, func(in *Instance) {
		lo := in.LastOperation
		if lo.Type != op.kind || lo.CreatedAt.IsZero() || (ended(lo.State) && !ended(state)) { // a new operation (save_with_new_operation)
			lo.CreatedAt = now()
		}
		lo.Type, lo.State, lo.Description, lo.UpdatedAt = op.kind, state, description, now()
		in.LastOperation = lo
	})
}

// ended says whether a last operation's state is final (succeeded, failed).
func ended(state string) bool { return state == StateSucceeded || state == StateFailed }
