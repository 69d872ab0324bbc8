package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// keyOp is one broker operation on a service key, as CC's
// CreateBindingAsyncJob and DeleteBindingJob run it: the bind or unbind,
// then (for a 202) polling the binding's last_operation.
type keyOp struct {
	kind       string // OpCreate or OpDelete
	key        Key
	broker     Broker
	serviceID  string
	planID     string
	first      osbCall
	maxPolling time.Duration
}

// keyRunner runs key operations against their brokers.
type keyRunner struct {
	f        *Foundation
	client   *brokerClient
	user     string
	interval time.Duration
	orphans  *orphanMitigator
}

// bindingPath is the binding's resource path at the broker.
func bindingPath(k Key) string {
	return "/v2/service_instances/" + k.InstanceGUID + "/service_bindings/" + k.GUID
}

// label is UnableToPerform's name of the operation.
func (op keyOp) label() string {
	return map[string]string{OpCreate: "create", OpDelete: "delete"}[op.kind]
}

// run is the job: its error is the job's, and the key's last operation
// says what happened (a deleted key goes).
func (r *keyRunner) run(ctx context.Context, op keyOp, retrievable bool) *cfError {
	start := time.Now()
	a, err := r.client.instanceCall(ctx, op.broker, r.user, op.first)
	if err == nil {
		err = firstAnswerError(op.kind, a) // parse_bind and parse_unbind see answers as parse_provision does
	}
	if err == nil && op.kind == OpCreate && a.status == http.StatusAccepted && !retrievable {
		err = &cfError{10001, "CF-BindingNotRetrievable", "The broker responded asynchronously but does not support fetching binding data"}
	}
	if err != nil {
		if op.kind == OpCreate && orphaned(a, err, bindSpecial) {
			r.orphans.unbind(op.broker, op.key.InstanceGUID, op.key.GUID, op.serviceID, op.planID)
		}
		r.record(op, StateFailed, err.Detail)
		return err
	}
	s := readState(a)
	if a.status != http.StatusAccepted {
		r.succeed(op, a.body, s.Description)
		return nil
	}
	r.record(op, StateInProgress, s.Description)
	return r.poll(ctx, op, start, s.Operation)
}

// poll asks the binding's last_operation until the broker ends the
// operation; an answer CC cannot read counts as in progress, as
// fetch_and_handle_service_binding_last_operation has it.
func (r *keyRunner) poll(ctx context.Context, op keyOp, start time.Time, operation string) *cfError {
	verb := map[string]string{OpCreate: "bind", OpDelete: "unbind"}[op.kind]
	return lastOperationPoll{client: r.client, broker: op.broker, user: r.user, path: bindingPath(op.key),
		query: map[string][]string{"plan_id": {op.planID}, "service_id": {op.serviceID}}, interval: r.interval,
		start: start, limit: op.maxPolling,
		read:     func(a osbAnswer) (bool, *cfError) { return r.read(ctx, op, a) },
		timedOut: func() { r.record(op, StateFailed, "Service Broker failed to "+verb+" within the required time.") },
		closed:   &cfError{10009, "CF-UnableToPerform", op.label() + " could not be completed: the simulator was closed"},
	}.run(ctx, operation)
}

// read applies one last_operation answer; done when the operation ended.
func (r *keyRunner) read(ctx context.Context, op keyOp, a osbAnswer) (bool, *cfError) {
	if a.status == http.StatusGone && op.kind == OpDelete {
		removeKey(r.f, op.key.GUID)
		return true, nil
	}
	if answerError(a) != nil {
		return false, nil
	}
	s := readState(a)
	switch s.State {
	case StateSucceeded:
		if op.kind == OpDelete {
			removeKey(r.f, op.key.GUID)
			return true, nil
		}
		return true, r.fetch(ctx, op, s.Description)
	case StateFailed:
		r.record(op, StateFailed, s.Description)
		return true, &cfError{10009, "CF-UnableToPerform", op.label() + " could not be completed: " + s.Description}
	}
	r.record(op, StateInProgress, s.Description)
	return false, nil
}

// fetch is GET of the binding (bindings_retrievable) once the broker says
// an asynchronous bind succeeded: its credentials are the key's.
func (r *keyRunner) fetch(ctx context.Context, op keyOp, description string) *cfError {
	a, err := r.client.instanceCall(ctx, op.broker, r.user, osbCall{method: http.MethodGet, path: bindingPath(op.key)})
	if err == nil && a.status != http.StatusOK {
		err = answerError(a)
		if err == nil {
			e := brokerBadResponse(a.status, a.body)
			err = &e
		}
	}
	if err == nil {
		err = answerError(a)
	}
	if err != nil {
		r.record(op, StateFailed, err.Detail)
		return err
	}
	r.succeed(op, a.body, description)
	return nil
}

// succeed ends the operation: a created key keeps the broker's
// credentials, syslog_drain_url and volume_mounts; a deleted one goes.
func (r *keyRunner) succeed(op keyOp, body []byte, description string) {
	if op.kind == OpDelete {
		removeKey(r.f, op.key.GUID)
		return
	}
	var b struct {
		Credentials    json.RawMessage `json:"credentials"`
		SyslogDrainURL *string         `json:"syslog_drain_url"`
		VolumeMounts   json.RawMessage `json:"volume_mounts"`
	}
	_ = json.Unmarshal(body, &b) // an object, checked by answerError
	updateKey(r.f, op.key.GUID, func(k *Key) {
		k.Credentials, k.SyslogDrainURL, k.VolumeMounts = b.Credentials, b.SyslogDrainURL, b.VolumeMounts
	})
	r.record(op, StateSucceeded, description)
}

// record sets the key's last operation (of the op's type) to state.
func (r *keyRunner) record(op keyOp, state, description string) {
	updateKey(r.f, op.key.GUID, func(k *Key) {
		lo := k.LastOperation
		if lo.Type != op.kind || lo.CreatedAt.IsZero() || (ended(lo.State) && !ended(state)) { // a new operation (save_with_new_operation)
			lo.CreatedAt = now()
		}
		lo.Type, lo.State, lo.Description, lo.UpdatedAt = op.kind, state, description, now()
		k.LastOperation, k.UpdatedAt = lo, now()
	})
}
