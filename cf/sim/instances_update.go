package sim

import (
	"context"
	"net/http"
)

// update is PATCH /v3/service_instances/:guid: refused as CC's preflight
// refuses (updateRefusal), then a job that asks the broker when
// parameters, the plan or maintenance_info change (update_broker_needed?),
// else the name changed at once and 200 with the instance.
func (iw *instanceWrites) update(w http.ResponseWriter, r *http.Request) {
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	m := readInstanceMessage(body, false)
	if len(m.problems) > 0 {
		writeError(w, http.StatusUnprocessableEntity, unprocessable(m.problems))
		return
	}
	in, ok := iw.f.Instance(r.PathValue("guid"))
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service instance"))
		return
	}
	if in.Type != TypeManaged {
		iw.refuse(w, "Updating a user-provided service instance is not simulated by cf/sim")
		return
	}
	current, _ := chainOf(iw.f, in.PlanGUID)
	next := current
	space, org, _ := spaceOrg(iw.f, in.SpaceGUID)
	if m.plan != "" {
		c, found := chainOf(iw.f, m.plan)
		if msg := checkPlan(c, found, space); msg != "" {
			iw.refuse(w, msg)
			return
		}
		if c.offering.GUID != current.offering.GUID {
			writeError(w, http.StatusBadRequest, cfError{1002, "CF-InvalidRelation", "service plan relates to a different service offering"})
			return
		}
		next = c
	}
	if status, e := updateRefusal(iw.f, in, m, current, next); status != 0 {
		writeError(w, status, e)
		return
	}
	switch {
	case inProgress(in):
		iw.refuse(w, "There is an operation in progress for the service instance.")
	case m.has("parameters") || next.plan.GUID != in.PlanGUID || (m.maintenance != "" && m.maintenance != in.MaintenanceVersion):
		iw.updateAtBroker(w, in, m, current, next, newOSBContext(space, org, or(m.name, in.Name)))
	default:
		_ = iw.f.updateInstance(in.GUID, func(x *Instance) { x.Name = or(m.name, x.Name) })
		in, _ = iw.f.Instance(in.GUID)
		writeJSON(w, http.StatusOK, iw.api.presentInstance(in, current.plan))
	}
}

// updateAtBroker starts the job that sends the broker the update (CC's
// Client#update body) and, when it succeeds, applies it.
func (iw *instanceWrites) updateAtBroker(w http.ResponseWriter, in Instance, m instanceMessage, current, next planChain, ctx osbContext) {
	var previous any = maintenanceInfo(in.MaintenanceVersion)
	if in.MaintenanceVersion == "" {
		previous = nil
	}
	parameters := m.parameters
	if parameters == nil {
		parameters = map[string]any{}
	}
	osbBody := map[string]any{"service_id": current.offering.CatalogID, "plan_id": next.plan.CatalogID, "context": ctx,
		"parameters": parameters, "previous_values": map[string]any{"plan_id": current.plan.CatalogID,
			"service_id": current.offering.CatalogID, "organization_id": ctx.OrganizationGUID, "space_id": ctx.SpaceGUID,
			"maintenance_info": previous}}
	version := m.maintenance
	if next.plan.GUID != current.plan.GUID {
		version = next.plan.MaintenanceVersion
	}
	if version != "" {
		osbBody["maintenance_info"] = maintenanceInfo(version)
	}
	op := instanceOp{kind: OpUpdate, instance: in, broker: current.broker, serviceID: current.offering.CatalogID,
		planID: current.plan.CatalogID, maxPolling: maxPolling(next.plan),
		first: osbCall{method: http.MethodPatch, path: "/v2/service_instances/" + in.GUID + "?accepts_incomplete=true", body: osbBody}}
	op.succeed = func(description string) {
		_ = iw.f.updateInstance(in.GUID, func(x *Instance) {
			x.Name, x.PlanGUID = or(m.name, x.Name), next.plan.GUID
			if version != "" || next.plan.GUID != current.plan.GUID {
				x.MaintenanceVersion = version
			}
		})
		iw.runner.record(op, StateSucceeded, description)
	}
	iw.runner.record(op, StateInProgress, "")
	iw.accepted(w, iw.jobs.start("service_instance.update", instanceLink(iw.f, in.GUID), func(ctx context.Context) *cfError {
		return iw.runner.run(ctx, op)
	}))
}
