package sim

import "slices"

// The foundation's broker writes, as the write routes make them: functions
// rather than methods, so that Foundation keeps to the methods tests call.

// brokerNamed finds a broker by name, but the one of guid except.
func brokerNamed(f *Foundation, name, except string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.ContainsFunc(f.brokers.list, func(b Broker) bool { return b.Name == name && b.GUID != except })
}

// getBroker is a broker by guid.
func getBroker(f *Foundation, guid string) (Broker, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.brokers.get(guid)
}

// insertBroker adds a broker unless its name is taken; it reports whether it did.
func insertBroker(f *Foundation, b Broker) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.ContainsFunc(f.brokers.list, func(o Broker) bool { return o.Name == b.Name }) {
		return false
	}
	_ = f.brokers.add(b.GUID, b) // fresh guid
	return true
}

// changeBroker applies change to a broker; it reports whether the broker exists.
func changeBroker(f *Foundation, guid string, change func(*Broker)) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.brokers.get(guid)
	if !ok {
		return false
	}
	change(&b)
	b.UpdatedAt = now()
	f.brokers.set(guid, b)
	return true
}

// brokerHasInstances reports whether a service instance uses one of the broker's plans.
func brokerHasInstances(f *Foundation, guid string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	plans := map[string]bool{}
	for _, p := range f.plans.list {
		if o, _ := f.offerings.get(p.OfferingGUID); o.BrokerGUID == guid {
			plans[p.GUID] = true
		}
	}
	return slices.ContainsFunc(f.instances.list, func(in Instance) bool { return plans[in.PlanGUID] })
}

// deleteBroker removes a broker with its offerings and plans.
func deleteBroker(f *Foundation, guid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range slices.Clone(f.offerings.list) {
		if o.BrokerGUID != guid {
			continue
		}
		for _, p := range slices.Clone(f.plans.list) {
			if p.OfferingGUID == o.GUID {
				f.plans.remove(p.GUID)
			}
		}
		f.offerings.remove(o.GUID)
	}
	f.brokers.remove(guid)
}

// spaceExists reports whether a space of that guid exists.
func spaceExists(f *Foundation, guid string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	_, ok := f.spaces.get(guid)
	return ok
}
