package sim

import (
	"context"
	"net/http"
	"time"
)

// instanceWrites answers the managed service instance writes (create,
// update, delete) as CC does: checked at once, then a pollable job drives
// the plan's broker (instanceRunner).
type instanceWrites struct {
	f      *Foundation
	api    *api
	jobs   *jobs
	runner *instanceRunner
	keys   *keyWrites // unbinds the instance's keys before it is deprovisioned
}

const errInvalidPlan = "Invalid service plan. Ensure that the service plan exists, is available, and you have access to it."

// osbContext is the context CC sends a broker (context_hash, with the instance's name).
type osbContext struct {
	Platform                string         `json:"platform"`
	OrganizationGUID        string         `json:"organization_guid"`
	SpaceGUID               string         `json:"space_guid"`
	OrganizationName        string         `json:"organization_name"`
	SpaceName               string         `json:"space_name"`
	OrganizationAnnotations map[string]any `json:"organization_annotations"`
	SpaceAnnotations        map[string]any `json:"space_annotations"`
	InstanceName            string         `json:"instance_name"`
	InstanceAnnotations     map[string]any `json:"instance_annotations,omitempty"`
}

func newOSBContext(s Space, o Org, name string) osbContext {
	return osbContext{Platform: "cloudfoundry", OrganizationGUID: o.GUID, SpaceGUID: s.GUID, OrganizationName: o.Name,
		SpaceName: s.Name, OrganizationAnnotations: map[string]any{}, SpaceAnnotations: map[string]any{}, InstanceName: name}
}

// checkPlan refuses a plan the space cannot use, with CC's messages.
func checkPlan(c planChain, found bool, s Space) string {
	switch {
	case !found:
		return errInvalidPlan
	case c.broker.SpaceGUID != "" && c.broker.SpaceGUID != s.GUID:
		return "Invalid service plan. This could be due to a space-scoped broker which is offering the service plan '" + c.plan.Name +
			"' with guid '" + c.plan.GUID + "' in another space or that the plan is not enabled in this organization. " +
			"Ensure that the service plan is visible in your current space '" + s.Name + "' with guid '" + s.GUID + "'."
	}
	return ""
}

// maxPolling is the plan's maximum_polling_duration when shorter than CC's default.
func maxPolling(p Plan) time.Duration {
	if d := time.Duration(p.MaximumPollingDuration) * time.Second; d > 0 && d < maxPollDuration {
		return d
	}
	return maxPollDuration
}

func (iw *instanceWrites) refuse(w http.ResponseWriter, message string) {
	writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{message}))
}

// create is POST /v3/service_instances for a managed instance: the
// instance (last operation create initial) at once, then a job provisions it.
func (iw *instanceWrites) create(w http.ResponseWriter, r *http.Request) {
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	m := readInstanceMessage(body, true)
	if len(m.problems) > 0 {
		writeError(w, http.StatusUnprocessableEntity, unprocessable(m.problems))
		return
	}
	space, org, ok := spaceOrg(iw.f, m.space)
	switch c, found := chainOf(iw.f, m.plan); {
	case !ok:
		iw.refuse(w, "Invalid space. Ensure that the space exists and you have access to it.")
	case m.userProvided:
		iw.refuse(w, "Type 'user-provided' is not simulated by cf/sim")
	case checkPlan(c, found, space) != "":
		iw.refuse(w, checkPlan(c, found, space))
	case c.broker.State != BrokerAvailable:
		iw.refuse(w, "The service instance cannot be created because there is an operation in progress for the service broker.")
	default:
		iw.provision(w, m, c, space, org)
	}
}

func (iw *instanceWrites) provision(w http.ResponseWriter, m instanceMessage, c planChain, space Space, org Org) {
	in := Instance{GUID: newUUID(), Name: m.name, Type: TypeManaged, PlanGUID: c.plan.GUID, SpaceGUID: space.GUID,
		MaintenanceVersion: c.plan.MaintenanceVersion, CreatedAt: now(), UpdatedAt: now(),
		LastOperation: LastOperation{Type: OpCreate, State: StateInitial, CreatedAt: now(), UpdatedAt: now()}}
	replaced, ok := insertInstance(iw.f, in)
	if !ok {
		iw.refuse(w, "The service instance name is taken: "+m.name+".")
		return
	}
	if replaced.GUID != "" { // its provision failed: the broker may hold it (OrphanMitigator#cleanup_failed_provision)
		if old, found := chainOf(iw.f, replaced.PlanGUID); found {
			iw.runner.orphans.deprovision(old.broker, replaced.GUID, old.offering.CatalogID, old.plan.CatalogID)
		}
	}
	ctx := newOSBContext(space, org, m.name)
	ctx.InstanceAnnotations = map[string]any{}
	osbBody := map[string]any{"service_id": c.offering.CatalogID, "plan_id": c.plan.CatalogID,
		"organization_guid": org.GUID, "space_guid": space.GUID, "context": ctx}
	if len(m.parameters) > 0 {
		osbBody["parameters"] = m.parameters
	}
	if c.plan.MaintenanceVersion != "" {
		osbBody["maintenance_info"] = maintenanceInfo(c.plan.MaintenanceVersion)
	}
	op := instanceOp{kind: OpCreate, instance: in, broker: c.broker, serviceID: c.offering.CatalogID, planID: c.plan.CatalogID,
		first:      osbCall{method: http.MethodPut, path: "/v2/service_instances/" + in.GUID + "?accepts_incomplete=true", body: osbBody},
		maxPolling: maxPolling(c.plan)}
	op.succeed = func(description string) { iw.runner.record(op, StateSucceeded, description) }
	iw.accepted(w, iw.jobs.start("service_instance.create", instanceLink(iw.f, in.GUID), func(ctx context.Context) *cfError {
		return iw.runner.run(ctx, op)
	}))
}

func (iw *instanceWrites) accepted(w http.ResponseWriter, jobGUID string) {
	w.Header().Set("Location", iw.api.url+"/v3/jobs/"+jobGUID)
	w.WriteHeader(http.StatusAccepted)
}

// inProgress reports whether an operation on the instance is under way.
func inProgress(in Instance) bool {
	return in.LastOperation.State == StateInProgress || in.LastOperation.State == StateInitial
}

// destroy is DELETE /v3/service_instances/:guid: a job deprovisions the
// instance, which goes when the broker says it is gone; with purge=true
// (`cf purge-service-instance`) CC forgets it and its bindings at once
// (204) without a word to the broker.
func (iw *instanceWrites) destroy(w http.ResponseWriter, r *http.Request) {
	in, ok := iw.f.Instance(r.PathValue("guid"))
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service instance"))
		return
	}
	if r.URL.Query().Get("purge") == "true" { // ServiceInstancePurge: the broker is not asked
		iw.f.RemoveInstance(in.GUID)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if in.Type != TypeManaged {
		iw.refuse(w, "Deleting a user-provided service instance is not simulated by cf/sim")
		return
	}
	if inProgress(in) {
		iw.refuse(w, "There is an operation in progress for the service instance.")
		return
	}
	c, _ := chainOf(iw.f, in.PlanGUID)
	q := map[string][]string{"accepts_incomplete": {"true"}, "plan_id": {c.plan.CatalogID}, "service_id": {c.offering.CatalogID}}
	op := instanceOp{kind: OpDelete, instance: in, broker: c.broker, serviceID: c.offering.CatalogID, planID: c.plan.CatalogID,
		first:      osbCall{method: http.MethodDelete, path: "/v2/service_instances/" + in.GUID, query: q},
		maxPolling: maxPolling(c.plan)}
	op.succeed = func(string) { iw.f.RemoveInstance(in.GUID) }
	iw.runner.record(op, StateInProgress, "")
	iw.accepted(w, iw.jobs.start("service_instance.delete", instanceLink(iw.f, in.GUID), func(ctx context.Context) *cfError {
		if err := iw.unbindKeys(ctx, in); err != nil {
			iw.runner.record(op, StateFailed, err.Detail)
			return err
		}
		return iw.runner.run(ctx, op)
	}))
}

// unbindKeys unbinds the instance's keys first, as CC's
// ServiceInstanceDelete removes its associations before it deprovisions:
// the first failure ends the delete.
func (iw *instanceWrites) unbindKeys(ctx context.Context, in Instance) *cfError {
	for _, k := range keysOf(iw.f, in.GUID) {
		op := iw.keys.unbindOp(k, in)
		iw.keys.runner.record(op, StateInProgress, "")
		if err := iw.keys.runner.run(ctx, op, false); err != nil {
			return err
		}
	}
	return nil
}
