package sim

import (
	"fmt"
	"slices"
	"strings"
)

// catalog is the part of a broker's GET /v2/catalog answer the simulator keeps.
type catalog struct {
	Services []catalogService `json:"services"`
}

type catalogService struct {
	ID             string        `json:"id"`
	Name           string        `json:"name"`
	Description    string        `json:"description"`
	Bindable       *bool         `json:"bindable"`
	PlanUpdateable bool          `json:"plan_updateable"`
	Retrievable    bool          `json:"bindings_retrievable"`
	Plans          []catalogPlan `json:"plans"`
}

type catalogPlan struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Description     string `json:"description"`
	Free            *bool  `json:"free"`
	Bindable        *bool  `json:"bindable"`
	PlanUpdateable  *bool  `json:"plan_updateable"`
	MaxPolling      int    `json:"maximum_polling_duration"`
	MaintenanceInfo *struct {
		Version string `json:"version"`
	} `json:"maintenance_info"`
}

// problems lists what makes a catalog invalid, as CC's catalog validation
// names the missing fields (shortened: see README "Not simulated").
func (c catalog) problems() []string {
	var out []string
	if len(c.Services) == 0 {
		out = append(out, "Service broker must provide at least one service")
	}
	for i, s := range c.Services {
		at := fmt.Sprintf("Service %d", i+1)
		out = appendMissing(out, at, map[string]string{"id": s.ID, "name": s.Name, "description": s.Description})
		if s.Bindable == nil {
			out = append(out, at+": bindable is required")
		}
		if len(s.Plans) == 0 {
			out = append(out, at+": at least one plan is required")
		}
		for j, p := range s.Plans {
			out = appendMissing(out, fmt.Sprintf("%s plan %d", at, j+1), map[string]string{"id": p.ID, "name": p.Name, "description": p.Description})
		}
	}
	return out
}

func appendMissing(out []string, at string, fields map[string]string) []string {
	for _, k := range []string{"id", "name", "description"} {
		if strings.TrimSpace(fields[k]) == "" {
			out = append(out, fmt.Sprintf("%s: %s is required", at, k))
		}
	}
	return out
}

// applyCatalog makes the broker's offerings and plans the catalog's: each
// found by its catalog id is updated, a new one added, one no longer in
// the catalog removed unless an instance uses it.
func applyCatalog(f *Foundation, brokerGUID string, c catalog) {
	f.mu.Lock()
	defer f.mu.Unlock()
	keepOfferings, keepPlans := map[string]bool{}, map[string]bool{}
	for _, s := range c.Services {
		o := upsertOffering(f, brokerGUID, s)
		keepOfferings[o.GUID] = true
		for _, p := range s.Plans {
			keepPlans[upsertPlan(f, o, p).GUID] = true
		}
	}
	used := map[string]bool{}
	for _, in := range f.instances.list {
		used[in.PlanGUID] = true
	}
	for _, p := range slices.Clone(f.plans.list) {
		if o, _ := f.offerings.get(p.OfferingGUID); o.BrokerGUID == brokerGUID && !keepPlans[p.GUID] && !used[p.GUID] {
			f.plans.remove(p.GUID)
		}
	}
	for _, o := range slices.Clone(f.offerings.list) {
		if o.BrokerGUID == brokerGUID && !keepOfferings[o.GUID] &&
			!slices.ContainsFunc(f.plans.list, func(p Plan) bool { return p.OfferingGUID == o.GUID }) {
			f.offerings.remove(o.GUID)
		}
	}
}

func upsertOffering(f *Foundation, brokerGUID string, s catalogService) Offering {
	i := slices.IndexFunc(f.offerings.list, func(o Offering) bool { return o.BrokerGUID == brokerGUID && o.CatalogID == s.ID })
	o := Offering{GUID: newUUID(), CatalogID: s.ID, BrokerGUID: brokerGUID, CreatedAt: now()}
	if i >= 0 {
		o = f.offerings.list[i]
	}
	o.Name, o.Description, o.Bindable, o.PlanUpdateable, o.UpdatedAt = s.Name, s.Description, *s.Bindable, s.PlanUpdateable, now()
	o.BindingsRetrievable = s.Retrievable
	if i >= 0 {
		f.offerings.set(o.GUID, o)
	} else {
		_ = f.offerings.add(o.GUID, o) // fresh guid
	}
	return o
}

func upsertPlan(f *Foundation, o Offering, c catalogPlan) Plan {
	i := slices.IndexFunc(f.plans.list, func(p Plan) bool { return p.OfferingGUID == o.GUID && p.CatalogID == c.ID })
	p := Plan{GUID: newUUID(), CatalogID: c.ID, OfferingGUID: o.GUID, CreatedAt: now()}
	if i >= 0 {
		p = f.plans.list[i]
	}
	p.Name, p.Description, p.UpdatedAt = c.Name, c.Description, now()
	p.Free, p.Bindable, p.PlanUpdateable = orTrue(c.Free), o.Bindable, o.PlanUpdateable
	if c.Bindable != nil {
		p.Bindable = *c.Bindable
	}
	if c.PlanUpdateable != nil {
		p.PlanUpdateable = *c.PlanUpdateable
	}
	p.MaintenanceVersion, p.MaximumPollingDuration = "", max(c.MaxPolling, 0)
	if c.MaintenanceInfo != nil {
		p.MaintenanceVersion = c.MaintenanceInfo.Version
	}
	if i >= 0 {
		f.plans.set(p.GUID, p)
	} else {
		_ = f.plans.add(p.GUID, p) // fresh guid
	}
	return p
}

func orTrue(b *bool) bool { return b == nil || *b }
