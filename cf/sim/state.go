package sim

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Errors of the Go state API.
var (
	// ErrNotFound: a named broker, offering, plan, org, space or instance does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: a guid is taken.
	ErrExists = errors.New("already exists")
)

// Instance types, as the API names them.
const (
	TypeManaged      = "managed"
	TypeUserProvided = "user-provided"
)

// Last operation types and states, as the API names them.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"

	StateInitial    = "initial"
	StateInProgress = "in progress"
	StateSucceeded  = "succeeded"
	StateFailed     = "failed"
)

// Org is an organization.
type Org struct {
	GUID, Name string
	CreatedAt  time.Time
}

// Space is a space of an org.
type Space struct {
	GUID, Name, OrgGUID string
	CreatedAt           time.Time
}

// Broker states (ServiceBrokerStateEnum): kept, never presented.
const (
	BrokerAvailable             = "AVAILABLE"
	BrokerSynchronizing         = "SYNCHRONIZING"
	BrokerSynchronizationFailed = "SYNCHRONIZATION_FAILED"
	BrokerDeleteInProgress      = "DELETE_IN_PROGRESS"
)

// Broker is a service broker; SpaceGUID is set for a space-scoped broker.
// State is one of the Broker* states. The credentials a broker was
// registered with are kept unexported: no answer ever shows them.
type Broker struct {
	GUID, Name, URL, SpaceGUID string
	State                      string
	CreatedAt, UpdatedAt       time.Time
	auth                       credentials
}

// credentials are a broker's basic-auth username and password.
type credentials struct{ username, password string }

// Offering is a service offering of a broker; CatalogID is the broker's service id.
// Description, Bindable, PlanUpdateable and BindingsRetrievable are the catalog's.
type Offering struct {
	GUID, Name, CatalogID, BrokerGUID string
	Description                       string
	Bindable, PlanUpdateable          bool
	BindingsRetrievable               bool
	CreatedAt, UpdatedAt              time.Time
}

// Plan is a service plan of an offering; CatalogID is the broker's plan id
// (broker_catalog.id); MaintenanceVersion is maintenance_info.version ("" = none);
// Bindable and PlanUpdateable are the plan's own or, absent, its offering's;
// MaximumPollingDuration is the catalog's maximum_polling_duration in
// seconds (0 = none: CC's 7 days).
type Plan struct {
	GUID, Name, CatalogID, OfferingGUID string
	MaintenanceVersion                  string
	MaximumPollingDuration              int
	Description                         string
	Free, Bindable, PlanUpdateable      bool
	CreatedAt, UpdatedAt                time.Time
}

// LastOperation is an instance's last operation; the zero value is presented as {}.
type LastOperation struct {
	Type, State, Description string
	CreatedAt, UpdatedAt     time.Time
}

// Instance is a service instance. PlanGUID is "" for a user-provided one.
type Instance struct {
	GUID, Name, Type, PlanGUID, SpaceGUID string
	// MaintenanceVersion is the instance's maintenance_info.version ("" = none).
	MaintenanceVersion string
	LastOperation      LastOperation
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Foundation is the simulated Cloud Controller's world: its orgs, spaces,
// brokers, offerings, plans and service instances, which the API answers
// from. Tests set it up in Go through CC.Foundation (the zero value is not
// usable); its methods are safe for concurrent use.
type Foundation struct {
	seedMu sync.Mutex // one Seed at a time, so that a broker is registered once

	mu        sync.RWMutex // guards the rest
	orgs      ordered[Org]
	spaces    ordered[Space]
	brokers   ordered[Broker]
	offerings ordered[Offering]
	plans     ordered[Plan]
	instances ordered[Instance]
	keys      ordered[Key] // service keys and app bindings
	apps      ordered[App]

	access planAccess // the visibility set on plans (visibility.go), its own lock
}

// newFoundation is an empty foundation.
func newFoundation() *Foundation {
	return &Foundation{orgs: newOrdered[Org](), spaces: newOrdered[Space](), brokers: newOrdered[Broker](),
		offerings: newOrdered[Offering](), plans: newOrdered[Plan](), instances: newOrdered[Instance](), keys: newOrdered[Key](),
		apps: newOrdered[App]()}
}

// ordered keeps values in creation order (the Cloud Controller's default
// order) with an index by guid.
type ordered[T any] struct {
	list  []T
	index map[string]int
}

func newOrdered[T any]() ordered[T] { return ordered[T]{index: map[string]int{}} }

func (o *ordered[T]) get(guid string) (T, bool) {
	i, ok := o.index[guid]
	if !ok {
		var zero T
		return zero, false
	}
	return o.list[i], true
}

func (o *ordered[T]) add(guid string, v T) error {
	if _, ok := o.index[guid]; ok {
		return fmt.Errorf("%w: guid %q", ErrExists, guid)
	}
	o.index[guid] = len(o.list)
	o.list = append(o.list, v)
	return nil
}

func (o *ordered[T]) set(guid string, v T) { o.list[o.index[guid]] = v }

func (o *ordered[T]) remove(guid string) bool {
	i, ok := o.index[guid]
	if !ok {
		return false
	}
	o.list = append(o.list[:i], o.list[i+1:]...)
	delete(o.index, guid)
	for j := i; j < len(o.list); j++ {
		o.index[guidOf(o.list[j])] = j
	}
	return true
}

func guidOf(v any) string {
	switch t := v.(type) {
	case Instance:
		return t.GUID
	case Key:
		return t.GUID
	case Plan:
		return t.GUID
	case Offering:
		return t.GUID
	case Broker:
		return t.GUID
	case Space:
		return t.GUID
	case Org:
		return t.GUID
	case App:
		return t.GUID
	}
	return ""
}

// now is the resource timestamp: UTC, whole seconds, as the API renders it.
func now() time.Time { return time.Now().UTC().Truncate(time.Second) }
