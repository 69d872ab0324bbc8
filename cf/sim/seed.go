package sim

import (
	"fmt"
	"time"
)

// MaxSeed is the most instances one Seed call creates.
const MaxSeed = 100000

// seedCatalog is the catalog Seed registers: the sample plans of the
// project's BOSH Director simulator (service id, plan id).
var seedCatalog = []struct{ service, plan string }{
	{"redis", "redis-small"}, {"redis", "redis-large"}, {"postgresql", "postgresql-small"},
}

// Seed registers a broker named brokerName (unless one exists) with the
// offerings redis and postgresql and the plans redis-small, redis-large and
// postgresql-small (maintenance_info version "1.0.0"), one org "seed-org"
// with a space "seed-space", and n managed instances spread round-robin
// across the plans, each with a succeeded create. It returns the instances.
func (f *Foundation) Seed(brokerName string, n int) ([]Instance, error) {
	if n < 0 || n > MaxSeed {
		return nil, fmt.Errorf("%w: seed %d is not between 0 and %d", ErrBadOptions, n, MaxSeed)
	}
	f.seedMu.Lock()
	defer f.seedMu.Unlock()
	plans, err := f.seedCatalog(brokerName)
	if err != nil {
		return nil, err
	}
	space, err := f.AddSpace(f.AddOrg("seed-org").GUID, "seed-space")
	if err != nil {
		return nil, err
	}
	at := now().Add(-time.Minute)
	out := make([]Instance, 0, n)
	for i := range n {
		p := plans[i%len(plans)]
		op := LastOperation{Type: OpCreate, State: StateSucceeded, Description: "Instance provisioned", CreatedAt: at, UpdatedAt: at}
		in, err := f.AddInstance("", fmt.Sprintf("%s-%d", p.CatalogID, i), p.GUID, space.GUID, op)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// seedCatalog registers the broker and its catalog, or finds them.
func (f *Foundation) seedCatalog(brokerName string) ([]Plan, error) {
	f.mu.RLock()
	var existing []Plan
	for _, b := range f.brokers.list {
		if b.Name == brokerName {
			existing = f.brokerPlansLocked(b.GUID)
		}
	}
	f.mu.RUnlock()
	if len(existing) > 0 {
		return existing, nil
	}
	b := f.AddBroker(brokerName)
	offerings := map[string]Offering{}
	var plans []Plan
	for _, e := range seedCatalog {
		o, ok := offerings[e.service]
		if !ok {
			var err error
			if o, err = f.AddOffering(b.GUID, e.service, e.service); err != nil {
				return nil, err
			}
			offerings[e.service] = o
		}
		p, err := f.AddPlan(o.GUID, e.plan, e.plan, "1.0.0")
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

func (f *Foundation) brokerPlansLocked(brokerGUID string) []Plan {
	var out []Plan
	for _, p := range f.plans.list {
		if o, _ := f.offerings.get(p.OfferingGUID); o.BrokerGUID == brokerGUID {
			out = append(out, p)
		}
	}
	return out
}
