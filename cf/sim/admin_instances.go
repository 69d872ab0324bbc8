package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// NamedInstance is a managed instance named by names (the body of POST
// /_sim/service_instances, and Foundation.AddInstanceByNames' argument): a managed
// instance of the broker's plan whose broker_catalog.id is Plan, in the
// space named Space of the org named Org (both made when absent), its last
// operation Type (default create) in State (default succeeded).
type NamedInstance struct {
	GUID   string `json:"guid"`
	Name   string `json:"name"`
	Broker string `json:"broker"`
	Plan   string `json:"plan"`
	Org    string `json:"org"`
	Space  string `json:"space"`
	Type   string `json:"type"`
	State  string `json:"state"`
}

// adminAddInstance serves POST /_sim/service_instances (make run's
// platform-only and in-step instances).
func (c *CC) adminAddInstance(w http.ResponseWriter, r *http.Request) {
	var in NamedInstance
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		adminError(w, http.StatusBadRequest, fmt.Errorf("%w: the body: %w", ErrBadOptions, err))
		return
	}
	got, err := c.foundation.AddInstanceByNames(in)
	switch {
	case errors.Is(err, ErrNotFound):
		adminError(w, http.StatusNotFound, err)
	case err != nil:
		adminError(w, http.StatusBadRequest, err)
	default:
		writeJSON(w, http.StatusCreated, map[string]string{"guid": got.GUID})
	}
}

// AddInstanceByNames adds a managed instance named by its broker (default
// "blacksmith"), its plan's broker_catalog.id, and its org and space names
// (made when absent; default "sample-org", "sample-space").
func (f *Foundation) AddInstanceByNames(in NamedInstance) (Instance, error) {
	broker, org, space := or(in.Broker, "blacksmith"), or(in.Org, "sample-org"), or(in.Space, "sample-space")
	op := LastOperation{Type: or(in.Type, OpCreate), State: or(in.State, StateSucceeded)}
	if in.Name == "" || in.Plan == "" {
		return Instance{}, fmt.Errorf("%w: name and plan are required", ErrBadOptions)
	}
	planGUID := ""
	f.mu.RLock()
	for _, b := range f.brokers.list {
		if b.Name != broker {
			continue
		}
		for _, p := range f.brokerPlansLocked(b.GUID) {
			if p.CatalogID == in.Plan {
				planGUID = p.GUID
			}
		}
	}
	orgGUID, spaceGUID := "", ""
	for _, o := range f.orgs.list {
		if o.Name == org {
			orgGUID = o.GUID
		}
	}
	for _, s := range f.spaces.list {
		if s.Name == space && s.OrgGUID == orgGUID && orgGUID != "" {
			spaceGUID = s.GUID
		}
	}
	f.mu.RUnlock()
	if planGUID == "" {
		return Instance{}, fmt.Errorf("plan %q of broker %q: %w", in.Plan, broker, ErrNotFound)
	}
	if orgGUID == "" {
		orgGUID = f.AddOrg(org).GUID
	}
	if spaceGUID == "" {
		s, err := f.AddSpace(orgGUID, space)
		if err != nil {
			return Instance{}, err
		}
		spaceGUID = s.GUID
	}
	return f.AddInstance(in.GUID, in.Name, planGUID, spaceGUID, op)
}
