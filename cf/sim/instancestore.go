package sim

import "slices"

// The foundation's service instance writes, as the instance routes make
// them: functions, so that Foundation keeps to the methods tests call.

// planChain is a plan with its offering and broker.
type planChain struct {
	plan     Plan
	offering Offering
	broker   Broker
}

// chainOf finds a plan's offering and broker.
func chainOf(f *Foundation, planGUID string) (planChain, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	p, ok := f.plans.get(planGUID)
	if !ok {
		return planChain{}, false
	}
	o, _ := f.offerings.get(p.OfferingGUID)
	b, ok := f.brokers.get(o.BrokerGUID)
	return planChain{p, o, b}, ok
}

// spaceOrg is a space and its org.
func spaceOrg(f *Foundation, spaceGUID string) (Space, Org, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	s, ok := f.spaces.get(spaceGUID)
	o, _ := f.orgs.get(s.OrgGUID)
	return s, o, ok
}

// insertInstance adds an instance unless its name is taken in its space;
// an instance of that name whose create failed is replaced, as CC's
// precursor does (replaced is that one, its GUID "" when none).
func insertInstance(f *Foundation, in Instance) (replaced Instance, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.instances.list, func(o Instance) bool { return o.SpaceGUID == in.SpaceGUID && o.Name == in.Name })
	if i >= 0 {
		replaced = f.instances.list[i]
		if !createFailed(replaced.LastOperation) {
			return Instance{}, false
		}
		f.instances.remove(replaced.GUID)
	}
	_ = f.instances.add(in.GUID, in) // fresh guid
	return replaced, true
}

// createFailed says whether a last operation is a failed create (CC's create_failed?).
func createFailed(lo LastOperation) bool { return lo.Type == OpCreate && lo.State == StateFailed }

// nameTaken reports whether another instance of the space has the name.
func nameTaken(f *Foundation, spaceGUID, name, except string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.ContainsFunc(f.instances.list, func(o Instance) bool {
		return o.SpaceGUID == spaceGUID && o.Name == name && o.GUID != except
	})
}

// instanceLink links a job to an instance while it exists.
func instanceLink(f *Foundation, guid string) jobLink {
	return jobLink{"service_instances", "/v3/service_instances/" + guid, func() bool { _, ok := f.Instance(guid); return ok }}
}
