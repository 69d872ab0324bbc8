package sim

import "net/http"

// The refusals of an update's preflight (ServiceInstanceUpdateManaged#preflight!),
// as CC words them (errors/v2.yml); the controller answers each 422
// CF-UnprocessableEntity with the message.
const (
	errPlanNotUpdateable    = "The service does not support changing plans."
	errNonBindablePlan      = "The service plan is invalid: cannot switch to non-bindable plan when service bindings exist"
	errMaintenanceWithPlan  = "maintenance_info should not be changed when switching to different plan."
	errMaintenanceNoSupport = "The service broker does not support upgrades for service instances created from this plan."
	errMaintenanceConflict  = "maintenance_info.version requested is invalid. Please ensure the catalog is up to date and you are providing a version supported by this service plan."
)

// updateRefusal is the first reason CC's preflight refuses an update, in
// its order: an instance whose create failed (404 ServiceInstanceNotFound),
// a name taken, a plan change the current plan does not allow or to a
// plan that cannot be bound while bindings exist, a maintenance_info
// change with a plan change, without the plan's support, or of a version
// neither the plan's nor the instance's. status 0: none.
func updateRefusal(f *Foundation, in Instance, m instanceMessage, current, next planChain) (int, cfError) {
	refuse := func(msg string) (int, cfError) { return http.StatusUnprocessableEntity, unprocessable([]string{msg}) }
	switch {
	case createFailed(in.LastOperation):
		return http.StatusNotFound, cfError{60004, "CF-ServiceInstanceNotFound", "The service instance could not be found: " + in.Name}
	case m.has("name") && m.name != in.Name && nameTaken(f, in.SpaceGUID, m.name, in.GUID):
		return refuse("The service instance name is taken: " + m.name + ".")
	case m.plan != "" && !current.plan.PlanUpdateable:
		return refuse(errPlanNotUpdateable)
	case m.plan != "" && !next.plan.Bindable && hasAppBindings(f, in.GUID):
		return refuse(errNonBindablePlan)
	}
	if !m.has("maintenance_info") || m.maintenance == "" {
		return 0, cfError{}
	}
	switch {
	case m.plan != "" && m.plan != in.PlanGUID:
		return refuse(errMaintenanceWithPlan)
	case current.plan.MaintenanceVersion == "":
		return refuse(errMaintenanceNoSupport)
	case m.maintenance != current.plan.MaintenanceVersion && (in.MaintenanceVersion == "" || m.maintenance != in.MaintenanceVersion):
		return refuse(errMaintenanceConflict)
	}
	return 0, cfError{}
}
