package sim

import "time"

// The JSON shapes of the v3 resources, fields in the order CC's presenters
// write them (see FACTS.md).

type guidRef struct {
	GUID string `json:"guid"`
}

type relation struct {
	Data guidRef `json:"data"`
}

type metadata struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func emptyMetadata() metadata {
	return metadata{Labels: map[string]string{}, Annotations: map[string]string{}}
}

type brokerJSON struct {
	GUID          string              `json:"guid"`
	CreatedAt     time.Time           `json:"created_at"`
	UpdatedAt     time.Time           `json:"updated_at"`
	Name          string              `json:"name"`
	URL           string              `json:"url"`
	Relationships map[string]relation `json:"relationships"`
	Metadata      metadata            `json:"metadata"`
	Links         map[string]href     `json:"links"`
}

func (a *api) presentBroker(b Broker) brokerJSON {
	j := brokerJSON{GUID: b.GUID, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt, Name: b.Name, URL: b.URL,
		Relationships: map[string]relation{}, Metadata: emptyMetadata(), Links: map[string]href{
			"self":              {a.url + "/v3/service_brokers/" + b.GUID},
			"service_offerings": {a.url + "/v3/service_offerings?service_broker_guids=" + b.GUID},
		}}
	if b.SpaceGUID != "" {
		j.Relationships["space"] = relation{guidRef{b.SpaceGUID}}
		j.Links["space"] = href{a.url + "/v3/spaces/" + b.SpaceGUID}
	}
	return j
}

type offeringCatalog struct {
	ID       string          `json:"id"`
	Metadata map[string]any  `json:"metadata"`
	Features map[string]bool `json:"features"`
}

type offeringJSON struct {
	GUID             string              `json:"guid"`
	CreatedAt        time.Time           `json:"created_at"`
	UpdatedAt        time.Time           `json:"updated_at"`
	Name             string              `json:"name"`
	Description      string              `json:"description"`
	Available        bool                `json:"available"`
	Tags             []string            `json:"tags"`
	Requires         []string            `json:"requires"`
	Shareable        bool                `json:"shareable"`
	DocumentationURL *string             `json:"documentation_url"`
	BrokerCatalog    offeringCatalog     `json:"broker_catalog"`
	Relationships    map[string]relation `json:"relationships"`
	Metadata         metadata            `json:"metadata"`
	Links            map[string]href     `json:"links"`
}

func (a *api) presentOffering(o Offering) offeringJSON {
	return offeringJSON{GUID: o.GUID, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, Name: o.Name,
		Description: o.Description, Available: true, Tags: []string{}, Requires: []string{},
		BrokerCatalog: offeringCatalog{ID: o.CatalogID, Metadata: map[string]any{}, Features: map[string]bool{
			"plan_updateable": o.PlanUpdateable, "bindable": o.Bindable, "instances_retrievable": false,
			"bindings_retrievable": false, "allow_context_updates": false}},
		Relationships: map[string]relation{"service_broker": {guidRef{o.BrokerGUID}}},
		Metadata:      emptyMetadata(),
		Links: map[string]href{
			"self":           {a.url + "/v3/service_offerings/" + o.GUID},
			"service_plans":  {a.url + "/v3/service_plans?service_offering_guids=" + o.GUID},
			"service_broker": {a.url + "/v3/service_brokers/" + o.BrokerGUID},
		}}
}

type planCatalog struct {
	ID                     string          `json:"id"`
	Metadata               map[string]any  `json:"metadata"`
	MaximumPollingDuration *int            `json:"maximum_polling_duration"`
	Features               map[string]bool `json:"features"`
}

type parameters struct {
	Parameters map[string]any `json:"parameters"`
}

type planJSON struct {
	GUID            string                           `json:"guid"`
	CreatedAt       time.Time                        `json:"created_at"`
	UpdatedAt       time.Time                        `json:"updated_at"`
	Name            string                           `json:"name"`
	VisibilityType  string                           `json:"visibility_type"`
	Available       bool                             `json:"available"`
	Free            bool                             `json:"free"`
	Costs           []any                            `json:"costs"`
	Description     string                           `json:"description"`
	MaintenanceInfo map[string]string                `json:"maintenance_info"`
	BrokerCatalog   planCatalog                      `json:"broker_catalog"`
	Schemas         map[string]map[string]parameters `json:"schemas"`
	Relationships   map[string]relation              `json:"relationships"`
	Metadata        metadata                         `json:"metadata"`
	Links           map[string]href                  `json:"links"`
}

func maintenanceInfo(version string) map[string]string {
	if version == "" {
		return map[string]string{}
	}
	return map[string]string{"version": version}
}

// presentPlan needs the plan's broker's space (for space-scoped brokers).
func (a *api) presentPlan(p Plan, brokerSpace string) planJSON {
	visibility := visibilityType(a.f, p.GUID, brokerSpace)
	j := planJSON{GUID: p.GUID, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, Name: p.Name, VisibilityType: visibility,
		Available: true, Free: p.Free, Costs: []any{}, Description: p.Description, MaintenanceInfo: maintenanceInfo(p.MaintenanceVersion),
		BrokerCatalog: planCatalog{ID: p.CatalogID, Metadata: map[string]any{},
			Features: map[string]bool{"bindable": p.Bindable, "plan_updateable": p.PlanUpdateable}},
		Schemas: map[string]map[string]parameters{
			"service_instance": {"create": {map[string]any{}}, "update": {map[string]any{}}},
			"service_binding":  {"create": {map[string]any{}}},
		},
		Relationships: map[string]relation{"service_offering": {guidRef{p.OfferingGUID}}},
		Metadata:      emptyMetadata(),
		Links: map[string]href{
			"self":             {a.url + "/v3/service_plans/" + p.GUID},
			"service_offering": {a.url + "/v3/service_offerings/" + p.OfferingGUID},
			"visibility":       {a.url + "/v3/service_plans/" + p.GUID + "/visibility"},
		}}
	if p.MaximumPollingDuration > 0 {
		j.BrokerCatalog.MaximumPollingDuration = &p.MaximumPollingDuration
	}
	if brokerSpace != "" {
		j.Relationships["space"] = relation{guidRef{brokerSpace}}
		j.Links["space"] = href{a.url + "/v3/spaces/" + brokerSpace}
	}
	return j
}

type lastOpJSON struct {
	Type        string     `json:"type,omitempty"`
	State       string     `json:"state,omitempty"`
	Description *string    `json:"description,omitempty"`
	UpdatedAt   *time.Time `json:"updated_at,omitempty"`
	CreatedAt   *time.Time `json:"created_at,omitempty"`
}

func presentLastOp(op LastOperation) lastOpJSON {
	if op == (LastOperation{}) {
		return lastOpJSON{} // CC presents a missing last operation as {}
	}
	return lastOpJSON{Type: op.Type, State: op.State, Description: &op.Description, UpdatedAt: &op.UpdatedAt, CreatedAt: &op.CreatedAt}
}

// managedJSON is a managed instance, upsJSON a user-provided one: the
// type-specific fields sit between type and relationships.
type managedJSON struct {
	GUID             string              `json:"guid"`
	CreatedAt        time.Time           `json:"created_at"`
	UpdatedAt        time.Time           `json:"updated_at"`
	Name             string              `json:"name"`
	Tags             []string            `json:"tags"`
	LastOperation    lastOpJSON          `json:"last_operation"`
	Type             string              `json:"type"`
	MaintenanceInfo  map[string]string   `json:"maintenance_info"`
	UpgradeAvailable bool                `json:"upgrade_available"`
	DashboardURL     *string             `json:"dashboard_url"`
	Relationships    map[string]relation `json:"relationships"`
	Metadata         metadata            `json:"metadata"`
	Links            map[string]href     `json:"links"`
}

type upsJSON struct {
	GUID            string              `json:"guid"`
	CreatedAt       time.Time           `json:"created_at"`
	UpdatedAt       time.Time           `json:"updated_at"`
	Name            string              `json:"name"`
	Tags            []string            `json:"tags"`
	LastOperation   lastOpJSON          `json:"last_operation"`
	Type            string              `json:"type"`
	SyslogDrainURL  *string             `json:"syslog_drain_url"`
	RouteServiceURL *string             `json:"route_service_url"`
	Relationships   map[string]relation `json:"relationships"`
	Metadata        metadata            `json:"metadata"`
	Links           map[string]href     `json:"links"`
}

// presentInstance needs the instance's plan (zero for user-provided).
func (a *api) presentInstance(in Instance, plan Plan) any {
	self := a.url + "/v3/service_instances/" + in.GUID
	links := map[string]href{
		"self":                        {self},
		"space":                       {a.url + "/v3/spaces/" + in.SpaceGUID},
		"service_credential_bindings": {a.url + "/v3/service_credential_bindings?service_instance_guids=" + in.GUID},
		"service_route_bindings":      {a.url + "/v3/service_route_bindings?service_instance_guids=" + in.GUID},
	}
	rel := map[string]relation{"space": {guidRef{in.SpaceGUID}}}
	if in.Type == TypeUserProvided {
		links["credentials"] = href{self + "/credentials"}
		return upsJSON{GUID: in.GUID, CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt, Name: in.Name, Tags: []string{},
			LastOperation: presentLastOp(in.LastOperation), Type: in.Type, Relationships: rel, Metadata: emptyMetadata(), Links: links}
	}
	rel["service_plan"] = relation{guidRef{in.PlanGUID}}
	links["service_plan"] = href{a.url + "/v3/service_plans/" + in.PlanGUID}
	links["parameters"] = href{self + "/parameters"}
	links["shared_spaces"] = href{self + "/relationships/shared_spaces"}
	return managedJSON{GUID: in.GUID, CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt, Name: in.Name, Tags: []string{},
		LastOperation: presentLastOp(in.LastOperation), Type: in.Type, MaintenanceInfo: maintenanceInfo(in.MaintenanceVersion),
		UpgradeAvailable: in.MaintenanceVersion != plan.MaintenanceVersion, Relationships: rel, Metadata: emptyMetadata(), Links: links}
}
