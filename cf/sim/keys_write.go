package sim

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// keyWrites answers the service credential binding routes (create, show,
// details, delete) for service keys and app bindings as CC does: checked
// at once, then a pollable job binds or unbinds at the instance's broker
// (keyRunner).
type keyWrites struct {
	f      *Foundation
	api    *api
	jobs   *jobs
	runner *keyRunner
}

// bindContext is the context CC sends with a bind (context_hash: no instance name).
type bindContext struct {
	Platform                string         `json:"platform"`
	OrganizationGUID        string         `json:"organization_guid"`
	SpaceGUID               string         `json:"space_guid"`
	OrganizationName        string         `json:"organization_name"`
	SpaceName               string         `json:"space_name"`
	OrganizationAnnotations map[string]any `json:"organization_annotations"`
	SpaceAnnotations        map[string]any `json:"space_annotations"`
}

// keyMessage is a create body as ServiceCredentialBindingCreateMessage reads it.
type keyMessage struct {
	kind, name, instance string
	app                  string // relationships.app (type app)
	parameters           map[string]any
	problems             []string
}

func readKeyMessage(body map[string]any) keyMessage {
	var m keyMessage
	var unknown []string
	for k := range body {
		if !slices.Contains([]string{"type", "strategy", "name", "relationships", "parameters", "metadata"}, k) {
			unknown = append(unknown, "'"+k+"'")
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		m.problems = append(m.problems, "Unknown field(s): "+strings.Join(unknown, ", "))
	}
	if m.kind, _ = body["type"].(string); m.kind != "app" && m.kind != "key" {
		m.problems = append(m.problems, "Type must be 'app' or 'key'")
	}
	m.name, _ = body["name"].(string)
	if m.kind == "key" && strings.TrimSpace(m.name) == "" {
		m.problems = append(m.problems, "Name can't be blank")
	}
	if p, ok := body["parameters"]; ok && p != nil {
		if m.parameters, ok = p.(map[string]any); !ok {
			m.problems = append(m.problems, "Parameters must be an object")
		}
	}
	rel, _ := body["relationships"].(map[string]any)
	si, _ := rel["service_instance"].(map[string]any)
	data, _ := si["data"].(map[string]any)
	if m.instance, _ = data["guid"].(string); m.instance == "" {
		m.problems = append(m.problems, "Relationships Service instance can't be blank")
	}
	appRel, _ := rel["app"].(map[string]any)
	appData, _ := appRel["data"].(map[string]any)
	if m.app, _ = appData["guid"].(string); m.kind == "app" && m.app == "" {
		m.problems = append(m.problems, "Relationships App can't be blank")
	}
	return m
}

func (kw *keyWrites) refuse(w http.ResponseWriter, message string) {
	writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{message}))
}

// create is POST /v3/service_credential_bindings of type key.
func (kw *keyWrites) create(w http.ResponseWriter, r *http.Request) {
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	m := readKeyMessage(body)
	if len(m.problems) > 0 {
		writeError(w, http.StatusUnprocessableEntity, unprocessable(m.problems))
		return
	}
	in, ok := kw.f.Instance(m.instance)
	if !ok {
		kw.refuse(w, "The service instance could not be found: '"+m.instance+"'")
		return
	}
	if m.kind == "app" {
		kw.createApp(w, m, in)
		return
	}
	c, _ := chainOf(kw.f, in.PlanGUID)
	old, exists := keyNamed(kw.f, in.GUID, m.name)
	if msg := keyRefusal(in, c, old, exists); msg != "" {
		kw.refuse(w, msg)
		return
	}
	if !exists {
		old.GUID = ""
	}
	if old.GUID != "" { // its bind failed: the broker may hold it (OrphanMitigator#cleanup_failed_bind)
		kw.runner.orphans.unbind(c.broker, in.GUID, old.GUID, c.offering.CatalogID, c.plan.CatalogID)
	}
	kw.bind(w, m, in, c, old.GUID)
}

// keyRefusal is CC's reason to refuse a key (ServiceCredentialBindingKeyCreate), "" for none.
func keyRefusal(in Instance, c planChain, old Key, exists bool) string {
	lo := old.LastOperation
	switch {
	case in.Type != TypeManaged:
		return "Service credential bindings of type 'key' are not supported for user-provided service instances."
	case !c.plan.Bindable:
		return "Service plan does not allow bindings."
	case in.LastOperation.Type == OpCreate && in.LastOperation.State == StateFailed:
		return "Service instance not found"
	case in.LastOperation.State == StateInProgress || in.LastOperation.State == StateInitial:
		return "There is an operation in progress for the service instance"
	case exists && lo.Type == OpCreate && lo.State != StateFailed:
		return "The binding name is invalid. Key binding names must be unique. The service instance already has a key binding with name '" +
			old.Name + "'."
	case exists && lo.Type == OpDelete:
		return "The binding name is invalid. Key binding names must be unique. The service instance already has a key binding with the name '" +
			old.Name + "' that is getting deleted or its deletion failed."
	}
	return ""
}

// bind records the key (create initial), replacing a failed one of its
// name, and starts the job that binds it.
func (kw *keyWrites) bind(w http.ResponseWriter, m keyMessage, in Instance, c planChain, replaced string) {
	k := Key{GUID: newUUID(), Name: m.name, InstanceGUID: in.GUID, AppGUID: m.app, CreatedAt: now(), UpdatedAt: now(),
		LastOperation: LastOperation{Type: OpCreate, State: StateInitial, CreatedAt: now(), UpdatedAt: now()}}
	putKey(kw.f, k, replaced)
	space, org, _ := spaceOrg(kw.f, in.SpaceGUID)
	osbBody := map[string]any{"service_id": c.offering.CatalogID, "plan_id": c.plan.CatalogID, "bind_resource": map[string]any{},
		"context": bindContext{Platform: "cloudfoundry", OrganizationGUID: org.GUID, SpaceGUID: space.GUID, OrganizationName: org.Name,
			SpaceName: space.Name, OrganizationAnnotations: map[string]any{}, SpaceAnnotations: map[string]any{}}}
	jobName := "service_keys.create"
	if k.AppGUID != "" { // Client#bind: app_guid, and the app in bind_resource
		osbBody["app_guid"] = k.AppGUID
		osbBody["bind_resource"] = map[string]any{"app_guid": k.AppGUID, "space_guid": space.GUID, "app_annotations": map[string]any{}}
		jobName = "service_bindings.create"
	}
	if len(m.parameters) > 0 {
		osbBody["parameters"] = m.parameters
	}
	op := keyOp{kind: OpCreate, key: k, broker: c.broker, serviceID: c.offering.CatalogID, planID: c.plan.CatalogID,
		first:      osbCall{method: http.MethodPut, path: bindingPath(k) + "?accepts_incomplete=true", body: osbBody},
		maxPolling: maxPolling(c.plan)}
	kw.accepted(w, kw.jobs.start(jobName, keyLink(kw.f, k.GUID), func(ctx context.Context) *cfError {
		return kw.runner.run(ctx, op, c.offering.BindingsRetrievable)
	}))
}

func (kw *keyWrites) accepted(w http.ResponseWriter, jobGUID string) {
	w.Header().Set("Location", kw.api.url+"/v3/jobs/"+jobGUID)
	w.WriteHeader(http.StatusAccepted)
}

// destroy is DELETE /v3/service_credential_bindings/:guid: a job unbinds
// the key, which goes when the broker says it is gone.
func (kw *keyWrites) destroy(w http.ResponseWriter, r *http.Request) {
	k, ok := getKey(kw.f, r.PathValue("guid"))
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service credential binding"))
		return
	}
	in, _ := kw.f.Instance(k.InstanceGUID)
	switch {
	case inProgress(Instance{LastOperation: k.LastOperation}):
		kw.refuse(w, "There is an operation in progress for the service binding.")
	case inProgress(in):
		kw.refuse(w, "There is an operation in progress for the service instance.")
	default:
		op := kw.unbindOp(k, in)
		kw.runner.record(op, StateInProgress, "")
		jobName := "service_keys.delete"
		if k.AppGUID != "" {
			jobName = "service_bindings.delete"
		}
		kw.accepted(w, kw.jobs.start(jobName, keyLink(kw.f, k.GUID), func(ctx context.Context) *cfError {
			return kw.runner.run(ctx, op, false)
		}))
	}
}

// unbindOp is the unbind of a key of an instance, as CC's client.unbind sends it.
func (kw *keyWrites) unbindOp(k Key, in Instance) keyOp {
	c, _ := chainOf(kw.f, in.PlanGUID)
	q := map[string][]string{"accepts_incomplete": {"true"}, "plan_id": {c.plan.CatalogID}, "service_id": {c.offering.CatalogID}}
	return keyOp{kind: OpDelete, key: k, broker: c.broker, serviceID: c.offering.CatalogID, planID: c.plan.CatalogID,
		first: osbCall{method: http.MethodDelete, path: bindingPath(k), query: q}, maxPolling: maxPolling(c.plan)}
}
