package sim

import (
	"slices"
	"strings"
	"time"
)

// decorators build a list's included resources, as CC's Field*Decorator
// and Include*Decorator classes do: each resource once, sorted by
// (created_at, guid), keys in the decorators' order. Callers hold the
// foundation's read lock.
type decorators struct{ a *api }

// The fields each fields decorator writes, in its order.
var (
	spaceView    = []string{"guid", "name", "relationships.organization"}
	orgView      = []string{"guid", "name"}
	planView     = []string{"guid", "name", "relationships.service_offering"}
	offeringView = []string{"name", "guid", "description", "tags", "documentation_url", "relationships.service_broker"}
	brokerView   = []string{"name", "guid"}
)

// instances is included for a page of service instances
// (FieldServiceInstance{Space,Organization,Plan,Offering,Broker}Decorator):
// spaces and organizations whenever asked for; plans, offerings and brokers
// only when the page holds a managed instance.
func (d decorators) instances(fields map[string][]string, page []Instance) object {
	f := d.a.f
	inc := object{}
	spaces := collect(page, func(in Instance) string { return in.SpaceGUID }, f.spaces.get, spaceKey)
	if asked := fields["space"]; len(asked) > 0 {
		inc = append(inc, member{"spaces", views(spaces, func(s Space) object {
			return view(asked, spaceView, map[string]any{"guid": s.GUID, "name": s.Name, "relationships.organization": s.OrgGUID})
		})})
	}
	if asked := fields["space.organization"]; len(asked) > 0 {
		orgs := collect(spaces, func(s Space) string { return s.OrgGUID }, f.orgs.get, orgKey)
		inc = append(inc, member{"organizations", views(orgs, func(o Org) object {
			return view(asked, orgView, map[string]any{"guid": o.GUID, "name": o.Name})
		})})
	}
	managed := slices.DeleteFunc(slices.Clone(page), func(in Instance) bool { return in.Type != TypeManaged })
	if len(managed) == 0 {
		return inc
	}
	plans := collect(managed, func(in Instance) string { return in.PlanGUID }, f.plans.get, planKey)
	if asked := fields["service_plan"]; len(asked) > 0 {
		inc = append(inc, member{"service_plans", views(plans, func(p Plan) object {
			return view(asked, planView, map[string]any{"guid": p.GUID, "name": p.Name, "relationships.service_offering": p.OfferingGUID})
		})})
	}
	offerings := collect(plans, func(p Plan) string { return p.OfferingGUID }, f.offerings.get, offeringKey)
	if asked := fields["service_plan.service_offering"]; len(asked) > 0 {
		inc = append(inc, member{"service_offerings", views(offerings, func(o Offering) object {
			j := d.a.presentOffering(o)
			return view(asked, offeringView, map[string]any{"name": j.Name, "guid": j.GUID, "description": j.Description,
				"tags": j.Tags, "documentation_url": j.DocumentationURL, "relationships.service_broker": o.BrokerGUID})
		})})
	}
	return d.brokers(inc, "service_plan.service_offering.service_broker", fields, offerings)
}

// brokers adds included.service_brokers when fields[key] asks for them
// (FieldService{Instance,Offering,Plan}ServiceBrokerDecorator).
func (d decorators) brokers(inc object, key string, fields map[string][]string, offerings []Offering) object {
	asked := fields[key]
	if len(asked) == 0 {
		return inc
	}
	brokers := collect(offerings, func(o Offering) string { return o.BrokerGUID }, d.a.f.brokers.get, brokerKey)
	return append(inc, member{"service_brokers", views(brokers, func(b Broker) object {
		return view(asked, brokerView, map[string]any{"name": b.Name, "guid": b.GUID})
	})})
}

// offerings is included for a page of service offerings.
func (d decorators) offerings(fields map[string][]string, page []Offering) object {
	return d.brokers(object{}, "service_broker", fields, page)
}

// plans is included for a page of service plans: include=space.organization
// (the space-scoped brokers' spaces and their orgs, presented in full),
// include=service_offering (the plans' offerings, presented in full), then
// fields[service_offering.service_broker].
func (d decorators) plans(q listQuery, page []Plan) object {
	f := d.a.f
	inc := object{}
	offerings := collect(page, func(p Plan) string { return p.OfferingGUID }, f.offerings.get, offeringKey)
	include := q.filters["include"]
	if slices.Contains(include, "space.organization") {
		brokers := collect(offerings, func(o Offering) string { return o.BrokerGUID }, f.brokers.get, brokerKey)
		spaces := collect(brokers, func(b Broker) string { return b.SpaceGUID }, f.spaces.get, spaceKey)
		orgs := collect(spaces, func(s Space) string { return s.OrgGUID }, f.orgs.get, orgKey)
		inc = append(inc, member{"spaces", views(spaces, d.a.presentSpace)},
			member{"organizations", views(orgs, d.a.presentOrg)})
	}
	if slices.Contains(include, "service_offering") {
		inc = append(inc, member{"service_offerings", views(offerings, d.a.presentOffering)})
	}
	return d.brokers(inc, "service_offering.service_broker", q.fields, offerings)
}

// collect looks up the resources the items refer to (by the guid ref
// gives; unknown and empty guids skipped), each once, sorted by key.
func collect[S, T any](items []S, ref func(S) string, get func(string) (T, bool), key func(T) (time.Time, string)) []T {
	seen := map[string]bool{}
	var out []T
	for _, it := range items {
		g := ref(it)
		if seen[g] {
			continue
		}
		seen[g] = true
		if t, ok := get(g); ok {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b T) int {
		ta, ga := key(a)
		tb, gb := key(b)
		if c := ta.Compare(tb); c != 0 {
			return c
		}
		return strings.Compare(ga, gb)
	})
	return out
}

// views presents each resource; an empty list is [].
func views[T, V any](ts []T, present func(T) V) []V {
	out := make([]V, 0, len(ts))
	for _, t := range ts {
		out = append(out, present(t))
	}
	return out
}

func spaceKey(s Space) (time.Time, string)       { return s.CreatedAt, s.GUID }
func orgKey(o Org) (time.Time, string)           { return o.CreatedAt, o.GUID }
func planKey(p Plan) (time.Time, string)         { return p.CreatedAt, p.GUID }
func offeringKey(o Offering) (time.Time, string) { return o.CreatedAt, o.GUID }
func brokerKey(b Broker) (time.Time, string)     { return b.CreatedAt, b.GUID }
