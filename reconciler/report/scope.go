package report

import (
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Scope limits a run to part of the estate; the zero Scope is everything.
// Any combination of fields may be set; a deployment is in scope when it
// satisfies every field set.
type Scope struct {
	// Service and Plan select the instances of a service or plan.
	Service string `json:"service,omitempty"`
	Plan    string `json:"plan,omitempty"`
	// Deployment selects one deployment by name.
	Deployment string `json:"deployment,omitempty"`
	// Instance selects one instance (and tries it even when it is quarantined).
	Instance string `json:"instance,omitempty"`
}

// Empty says the scope is everything.
func (s Scope) Empty() bool { return s == Scope{} }

// String is the scope as the query that selects it.
func (s Scope) String() string {
	var parts []string
	for _, p := range [][2]string{{"service", s.Service}, {"plan", s.Plan}, {"deployment", s.Deployment}, {"instance", s.Instance}} {
		if p[1] != "" {
			parts = append(parts, p[0]+"="+p[1])
		}
	}
	return strings.Join(parts, "&")
}

// Owner is what a run knows of a deployment without fetching it: the
// instance, service and plan its name tells, else those of the index record
// that names it.
type Owner struct {
	Instance, Service, Plan string
}

// Covers says whether the scope takes a deployment of that name and owner;
// known is false when neither its name nor the index tells its owner (its
// manifest would: it is out of any scope but the deployment's own).
func (s Scope) Covers(name string, o Owner, known bool) bool {
	if s.Deployment != "" && name != s.Deployment {
		return false
	}
	if s.Instance == "" && s.Service == "" && s.Plan == "" {
		return true
	}
	return known && (s.Instance == "" || o.Instance == s.Instance) && (s.Service == "" || o.Service == s.Service) &&
		(s.Plan == "" || o.Plan == s.Plan)
}

// CoversRecord says whether the scope takes index record rec of instance id
// (orphan detection within the scope).
func (s Scope) CoversRecord(id string, rec *vault.Record) bool {
	return (s.Deployment == "" || rec.Deployment(id) == s.Deployment) && (s.Instance == "" || id == s.Instance) &&
		(s.Service == "" || rec.ServiceID == s.Service) && (s.Plan == "" || rec.PlanID == s.Plan)
}
