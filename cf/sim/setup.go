package sim

import "fmt"

// AddOrg creates an organization.
func (c *store) AddOrg(name string) Org {
	o := Org{GUID: newUUID(), Name: name, CreatedAt: now()}
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.orgs.add(o.GUID, o) // fresh guid
	return o
}

// AddSpace creates a space in an org.
func (c *store) AddSpace(orgGUID, name string) (Space, error) {
	s := Space{GUID: newUUID(), Name: name, OrgGUID: orgGUID, CreatedAt: now()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.orgs.get(orgGUID); !ok {
		return Space{}, fmt.Errorf("adding space %q: org %q: %w", name, orgGUID, ErrNotFound)
	}
	_ = c.spaces.add(s.GUID, s)
	return s, nil
}

// AddBroker registers a global service broker named name.
func (c *store) AddBroker(name string) Broker {
	b, _ := c.AddSpaceBroker(name, "") // a global broker needs no space
	return b
}

// AddSpaceBroker registers a broker scoped to a space ("" = global).
func (c *store) AddSpaceBroker(name, spaceGUID string) (Broker, error) {
	b := Broker{GUID: newUUID(), Name: name, URL: "https://" + name + ".broker.invalid", SpaceGUID: spaceGUID, CreatedAt: now()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.spaces.get(spaceGUID); spaceGUID != "" && !ok {
		return Broker{}, fmt.Errorf("adding broker %q: space %q: %w", name, spaceGUID, ErrNotFound)
	}
	_ = c.brokers.add(b.GUID, b)
	return b, nil
}

// AddOffering adds a service offering (the broker's catalog service
// catalogID) to a broker.
func (c *store) AddOffering(brokerGUID, catalogID, name string) (Offering, error) {
	o := Offering{GUID: newUUID(), Name: name, CatalogID: catalogID, BrokerGUID: brokerGUID, CreatedAt: now()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.brokers.get(brokerGUID); !ok {
		return Offering{}, fmt.Errorf("adding offering %q: broker %q: %w", name, brokerGUID, ErrNotFound)
	}
	_ = c.offerings.add(o.GUID, o)
	return o, nil
}

// AddPlan adds a plan (the broker's catalog plan brokerCatalogID) to an
// offering; maintenanceVersion is its maintenance_info.version ("" = none).
func (c *store) AddPlan(offeringGUID, brokerCatalogID, name, maintenanceVersion string) (Plan, error) {
	p := Plan{GUID: newUUID(), Name: name, CatalogID: brokerCatalogID, OfferingGUID: offeringGUID,
		MaintenanceVersion: maintenanceVersion, CreatedAt: now()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.offerings.get(offeringGUID); !ok {
		return Plan{}, fmt.Errorf("adding plan %q: offering %q: %w", name, offeringGUID, ErrNotFound)
	}
	_ = c.plans.add(p.GUID, p)
	return p, nil
}

// AddInstance adds a managed service instance of a plan in a space (guid ""
// = a random one); its maintenance_info starts as the plan's.
func (c *store) AddInstance(guid, name, planGUID, spaceGUID string, op LastOperation) (Instance, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.plans.get(planGUID)
	if !ok {
		return Instance{}, fmt.Errorf("adding instance %q: plan %q: %w", name, planGUID, ErrNotFound)
	}
	return c.addInstanceLocked(Instance{GUID: guid, Name: name, Type: TypeManaged, PlanGUID: planGUID,
		SpaceGUID: spaceGUID, MaintenanceVersion: p.MaintenanceVersion, LastOperation: stamped(op)})
}

// AddUserProvidedInstance adds a user-provided service instance in a space.
func (c *store) AddUserProvidedInstance(guid, name, spaceGUID string) (Instance, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addInstanceLocked(Instance{GUID: guid, Name: name, Type: TypeUserProvided, SpaceGUID: spaceGUID,
		LastOperation: LastOperation{Type: OpCreate, State: StateSucceeded, Description: "Operation succeeded",
			CreatedAt: now(), UpdatedAt: now()}})
}

func (c *store) addInstanceLocked(in Instance) (Instance, error) {
	if _, ok := c.spaces.get(in.SpaceGUID); !ok {
		return Instance{}, fmt.Errorf("adding instance %q: space %q: %w", in.Name, in.SpaceGUID, ErrNotFound)
	}
	in.GUID = or(in.GUID, newUUID())
	in.CreatedAt, in.UpdatedAt = now(), now()
	if err := c.instances.add(in.GUID, in); err != nil {
		return Instance{}, fmt.Errorf("adding instance %q: %w", in.Name, err)
	}
	return in, nil
}

// RemoveInstance deletes an instance; it reports whether it existed.
func (c *store) RemoveInstance(guid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.instances.remove(guid)
}

// SetLastOperation replaces an instance's last operation.
func (c *store) SetLastOperation(guid string, op LastOperation) error {
	return c.updateInstance(guid, func(in *Instance) { in.LastOperation = stamped(op) })
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
func (c *store) SetInstanceMaintenanceVersion(guid, version string) error {
	return c.updateInstance(guid, func(in *Instance) { in.MaintenanceVersion = version })
}

func (c *store) updateInstance(guid string, change func(*Instance)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	in, ok := c.instances.get(guid)
	if !ok {
		return fmt.Errorf("instance %q: %w", guid, ErrNotFound)
	}
	change(&in)
	in.UpdatedAt = now()
	c.instances.set(guid, in)
	return nil
}

// Instance returns an instance by guid.
func (c *store) Instance(guid string) (Instance, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.instances.get(guid)
}

// Plans returns every plan, in the order they were added.
func (c *store) Plans() []Plan {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]Plan(nil), c.plans.list...)
}

// InstanceCount is the number of service instances held.
func (c *store) InstanceCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.instances.list)
}

// RemoveAll deletes every org, space, broker, offering, plan and instance.
func (c *store) RemoveAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh := newStore(c.url)
	c.orgs, c.spaces, c.brokers, c.offerings, c.plans, c.instances = fresh.orgs, fresh.spaces, fresh.brokers, fresh.offerings, fresh.plans, fresh.instances
}
