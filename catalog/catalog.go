package catalog

import (
	"slices"
)

// Catalog is every service the broker offers, in the order they were found.
type Catalog struct {
	// Services are in directory order, then by service directory name.
	Services []Service
}

// Service is one service offering, read from service.yml.
type Service struct {
	// ID is the service's unique id. Required.
	ID string
	// Name is the CLI-friendly name (no whitespace). Required.
	Name string
	// Description is shown to platform users. Required.
	Description string
	// Bindable says whether instances can be bound. Default true.
	Bindable bool
	// Tags are free-form labels passed on to bindings. Default none.
	Tags []string
	// Limit caps instances of the service across plans; 0 = unlimited. Default 0.
	Limit int
	// Shareable lets the platform share its instances with other spaces
	// (the catalog's metadata.shareable, which Cloud Foundry reads).
	// Default false.
	Shareable bool
	// Plans are the service's plans, by plan directory name; at least one.
	Plans []Plan
}

// Plan is one plan of a service, read from its plan directory.
type Plan struct {
	// ID is the plan's id, unique across the whole catalog. Required.
	ID string
	// Name is the CLI-friendly name (no whitespace), unique within its service. Required.
	Name string
	// Description is shown to platform users. Required.
	Description string
	// Limit caps instances of the plan; 0 = unlimited. Default 0.
	Limit int
	// MaxBindings caps the bindings of each instance of the plan; 0 =
	// unlimited. Default 0.
	MaxBindings int
	// Bindings says whose credentials a binding gets: BindingsShared (the
	// instance's, the default) or BindingsPerBinding (secrets of its own,
	// declared in the manifest: binds and unbinds deploy).
	Bindings string
	// Updatable says whether instances may change to this plan. Default false.
	Updatable bool
	// MaximumPollingDuration is how long, in seconds, the platform polls an
	// asynchronous operation of the plan before it gives up (the catalog's
	// maximum_polling_duration); 0 = the platform's own, else
	// MinPollingDuration to MaxPollingDuration. Default 0.
	MaximumPollingDuration int
	// PollingInterval is the least Retry-After, in seconds, last_operation
	// answers while an operation of the plan is in progress (later answers
	// ask for longer: see the broker's retryAfter); 1 to MaxPollingInterval.
	// Default 0: DefaultPollingInterval.
	PollingInterval int
	// PostDeployErrands are the errands the broker runs, in order, once a
	// provision or an update of an instance of the plan has deployed
	// (plan.yml's lifecycle_errands.post_deploy): the operation succeeds
	// only when each exits 0. Default none.
	PostDeployErrands []string
	// PreDeleteErrands are the errands the broker runs, in order, before a
	// deprovision deletes an instance's deployment (lifecycle_errands.
	// pre_delete): one that does not exit 0 stops the deletion. Default none.
	PreDeleteErrands []string
	// Manifest is the BOSH manifest template (manifest.yml). Required.
	Manifest *Template
	// Credentials is the binding credentials template (credentials.yml);
	// nil when the plan has none.
	Credentials *Template
	// Schemas are the JSON Schemas of the parameters the plan takes. Default none.
	Schemas Schemas
	// AcceptAnyParameters lets a plan without a schema for an operation take
	// any parameters on it (they are still inserted as YAML values). Default false:
	// such a plan refuses parameters.
	AcceptAnyParameters bool
	// MergeParameters deep-merges the (checked) parameters into the
	// manifest's top-level properties, besides what the template does with
	// them. Default false: parameters reach the manifest where the template puts them.
	MergeParameters bool
	// ServiceID is the id of the service the plan belongs to.
	ServiceID string
	// Director names the BOSH Director (bosh.name) that deploys the plan's
	// instances. Default "": the first configured Director.
	Director string
	// MaintenanceInfo is the version of what the plan deploys; nil when the
	// plan declares none (then no plan of the catalog may).
	MaintenanceInfo *MaintenanceInfo
	// Source is the plan.yml the plan was read from ("" for a plan made in
	// code): problems found later name it.
	Source string
}

// The bounds of a plan's polling fields (plan.yml): a platform that gives
// up on an operation before a minute has gone never sees a BOSH deploy
// finish, and Cloud Foundry polls at most a week whatever a plan says
// (cloud_controller_ng's broker_client_max_async_poll_duration_minutes).
const (
	MinPollingDuration     = 60
	MaxPollingDuration     = 7 * 24 * 3600
	DefaultPollingInterval = 10
	MaxPollingInterval     = 3600
)

// The kinds of a plan's bindings (Plan.Bindings).
const (
	BindingsShared     = "shared"
	BindingsPerBinding = "per_binding"
)

// Interval is the plan's PollingInterval, or DefaultPollingInterval when
// it has none.
func (p Plan) Interval() int {
	if p.PollingInterval > 0 {
		return p.PollingInterval
	}
	return DefaultPollingInterval
}

// PerBinding says whether each binding of the plan gets secrets of its own.
func (p Plan) PerBinding() bool { return p.Bindings == BindingsPerBinding }

// Plan returns the plan with id planID and the service it belongs to.
func (c *Catalog) Plan(planID string) (Service, Plan, bool) {
	if c == nil {
		return Service{}, Plan{}, false
	}
	for _, s := range c.Services {
		for _, p := range s.Plans {
			if p.ID == planID {
				return s, p, true
			}
		}
	}
	return Service{}, Plan{}, false
}

// Service returns the service with the given id.
func (c *Catalog) Service(id string) (Service, bool) {
	if c == nil {
		return Service{}, false
	}
	for _, s := range c.Services {
		if s.ID == id {
			return s, true
		}
	}
	return Service{}, false
}

// PlanIDs returns the id of every plan, sorted.
func (c *Catalog) PlanIDs() []string {
	if c == nil {
		return nil
	}
	var ids []string
	for _, s := range c.Services {
		for _, p := range s.Plans {
			ids = append(ids, p.ID)
		}
	}
	slices.Sort(ids)
	return ids
}
