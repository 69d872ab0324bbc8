package sim

import (
	"fmt"
	"slices"
)

// AddOrg creates an organization.
func (f *Foundation) AddOrg(name string) Org {
	o := Org{GUID: newUUID(), Name: name, CreatedAt: now()}
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = f.orgs.add(o.GUID, o) // fresh guid
	return o
}

// AddSpace creates a space in an org.
func (f *Foundation) AddSpace(orgGUID, name string) (Space, error) {
	s := Space{GUID: newUUID(), Name: name, OrgGUID: orgGUID, CreatedAt: now()}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.orgs.get(orgGUID); !ok {
		return Space{}, fmt.Errorf("adding space %q: org %q: %w", name, orgGUID, ErrNotFound)
	}
	_ = f.spaces.add(s.GUID, s)
	return s, nil
}

// AddBroker registers a global service broker named name.
func (f *Foundation) AddBroker(name string) Broker {
	b, _ := f.AddSpaceBroker(name, "") // a global broker needs no space
	return b
}

// AddSpaceBroker registers a broker scoped to a space ("" = global).
func (f *Foundation) AddSpaceBroker(name, spaceGUID string) (Broker, error) {
	b := Broker{GUID: newUUID(), Name: name, URL: "https://" + name + ".broker.invalid", SpaceGUID: spaceGUID,
		State: BrokerAvailable, CreatedAt: now(), UpdatedAt: now()}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.spaces.get(spaceGUID); spaceGUID != "" && !ok {
		return Broker{}, fmt.Errorf("adding broker %q: space %q: %w", name, spaceGUID, ErrNotFound)
	}
	_ = f.brokers.add(b.GUID, b)
	return b, nil
}

// AddOffering adds a service offering (the broker's catalog service
// catalogID) to a broker.
func (f *Foundation) AddOffering(brokerGUID, catalogID, name string) (Offering, error) {
	o := Offering{GUID: newUUID(), Name: name, CatalogID: catalogID, BrokerGUID: brokerGUID, Description: name + " service",
		Bindable: true, PlanUpdateable: true, CreatedAt: now(), UpdatedAt: now()}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.brokers.get(brokerGUID); !ok {
		return Offering{}, fmt.Errorf("adding offering %q: broker %q: %w", name, brokerGUID, ErrNotFound)
	}
	_ = f.offerings.add(o.GUID, o)
	return o, nil
}

// AddPlan adds a plan (the broker's catalog plan brokerCatalogID) to an
// offering; maintenanceVersion is its maintenance_info.version ("" = none).
func (f *Foundation) AddPlan(offeringGUID, brokerCatalogID, name, maintenanceVersion string) (Plan, error) {
	p := Plan{GUID: newUUID(), Name: name, CatalogID: brokerCatalogID, OfferingGUID: offeringGUID,
		MaintenanceVersion: maintenanceVersion, Description: name + " plan", Free: true, Bindable: true, PlanUpdateable: true,
		CreatedAt: now(), UpdatedAt: now()}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.offerings.get(offeringGUID); !ok {
		return Plan{}, fmt.Errorf("adding plan %q: offering %q: %w", name, offeringGUID, ErrNotFound)
	}
	_ = f.plans.add(p.GUID, p)
	return p, nil
}

// AddInstance adds a managed service instance of a plan in a space (guid ""
// = a random one); its maintenance_info starts as the plan's.
func (f *Foundation) AddInstance(guid, name, planGUID, spaceGUID string, op LastOperation) (Instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.plans.get(planGUID)
	if !ok {
		return Instance{}, fmt.Errorf("adding instance %q: plan %q: %w", name, planGUID, ErrNotFound)
	}
	return f.addInstanceLocked(Instance{GUID: guid, Name: name, Type: TypeManaged, PlanGUID: planGUID,
		SpaceGUID: spaceGUID, MaintenanceVersion: p.MaintenanceVersion, LastOperation: stamped(op)})
}

// AddUserProvidedInstance adds a user-provided service instance in a space.
func (f *Foundation) AddUserProvidedInstance(guid, name, spaceGUID string) (Instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addInstanceLocked(Instance{GUID: guid, Name: name, Type: TypeUserProvided, SpaceGUID: spaceGUID,
		LastOperation: LastOperation{Type: OpCreate, State: StateSucceeded, Description: "Operation succeeded",
			CreatedAt: now(), UpdatedAt: now()}})
}

func (f *Foundation) addInstanceLocked(in Instance) (Instance, error) {
	if _, ok := f.spaces.get(in.SpaceGUID); !ok {
		return Instance{}, fmt.Errorf("adding instance %q: space %q: %w", in.Name, in.SpaceGUID, ErrNotFound)
	}
	in.GUID = or(in.GUID, newUUID())
	in.CreatedAt, in.UpdatedAt = now(), now()
	if err := f.instances.add(in.GUID, in); err != nil {
		return Instance{}, fmt.Errorf("adding instance %q: %w", in.Name, err)
	}
	return in, nil
}

// RemoveInstance deletes an instance and its keys; it reports whether it existed.
func (f *Foundation) RemoveInstance(guid string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range slices.Clone(f.keys.list) {
		if k.InstanceGUID == guid {
			f.keys.remove(k.GUID)
		}
	}
	return f.instances.remove(guid)
}

// SetLastOperation replaces an instance's last operation.
func (f *Foundation) SetLastOperation(guid string, op LastOperation) error {
	return f.updateInstance(guid, func(in *Instance) { in.LastOperation = stamped(op) })
}

// stamped fills in a last operation's missing times with now.
func stamped(op LastOperation) LastOperation {
	if op == (LastOperation{}) {
		return op
	}
	if op.CreatedAt.IsZero() {
		op.CreatedAt = now()
	}
	if op.UpdatedAt.IsZero() {
		op.UpdatedAt = op.CreatedAt
	}
	op.CreatedAt, op.UpdatedAt = op.CreatedAt.UTC(), op.UpdatedAt.UTC()
	return op
}

// SetInstanceMaintenanceVersion sets an instance's maintenance_info.version.
func (f *Foundation) SetInstanceMaintenanceVersion(guid, version string) error {
	return f.updateInstance(guid, func(in *Instance) { in.MaintenanceVersion = version })
}

func (f *Foundation) updateInstance(guid string, change func(*Instance)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.instances.get(guid)
	if !ok {
		return fmt.Errorf("instance %q: %w", guid, ErrNotFound)
	}
	change(&in)
	in.UpdatedAt = now()
	f.instances.set(guid, in)
	return nil
}

// Instance returns an instance by guid.
func (f *Foundation) Instance(guid string) (Instance, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.instances.get(guid)
}

// Broker returns a broker by guid (its State included).
func (f *Foundation) Broker(guid string) (Broker, bool) { return getBroker(f, guid) }

// Plans returns every plan, in the order they were added.
func (f *Foundation) Plans() []Plan {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return append([]Plan(nil), f.plans.list...)
}

// InstanceCount is the number of service instances held.
func (f *Foundation) InstanceCount() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.instances.list)
}

// RemoveAll deletes every org, space, broker, offering, plan, instance and key.
func (f *Foundation) RemoveAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	fresh := newFoundation()
	f.orgs, f.spaces, f.brokers, f.offerings, f.plans, f.instances = fresh.orgs, fresh.spaces, fresh.brokers, fresh.offerings, fresh.plans, fresh.instances
	f.keys = fresh.keys
}
