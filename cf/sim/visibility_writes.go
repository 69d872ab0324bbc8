package sim

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// visibilityWrites answers the plan visibility writes of
// service_plan_visibility_controller.rb (config/routes.rb:227-231): PATCH
// replaces a plan's visibility (update), POST adds orgs to it (apply),
// DELETE .../visibility/:org_guid takes one org away (destroy).
type visibilityWrites struct{ f *Foundation }

// visibilityMessage is a checked ServicePlanVisibilityUpdateMessage.
type visibilityMessage struct {
	kind string
	orgs []string
}

// readVisibility reads and checks the body as
// ServicePlanVisibilityUpdateMessage does (type one of public, admin,
// organization; organizations, [{"guid": ...}], given for organization
// only; no other key): a 400 CF-BadRequest naming each problem otherwise.
func readVisibility(w http.ResponseWriter, r *http.Request) (visibilityMessage, bool) {
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body == nil {
		writeError(w, http.StatusBadRequest, cfError{1001, "CF-MessageParseError", "Request invalid due to parse error: invalid request body"})
		return visibilityMessage{}, false
	}
	var m visibilityMessage
	var problems []string
	for k := range body {
		if k != "type" && k != "organizations" {
			problems = append(problems, "Unknown field(s): '"+k+"'")
		}
	}
	if json.Unmarshal(body["type"], &m.kind) != nil || (m.kind != visPublic && m.kind != visAdmin && m.kind != visOrg) {
		problems = append(problems, "Type must be one of 'public', 'admin', 'organization'")
	}
	raw, given := body["organizations"]
	given = given && string(raw) != "null"
	switch {
	case m.kind == visOrg && !given:
		problems = append(problems, "Organizations can't be blank")
	case m.kind != visOrg && given:
		problems = append(problems, "Organizations must be blank")
	case given:
		var orgs []map[string]any
		if json.Unmarshal(raw, &orgs) != nil || len(orgs) == 0 {
			problems = append(problems, `Organizations organizations list must be structured like this: "organizations": [{"guid": "valid-guid"}]`)
			break
		}
		for _, o := range orgs {
			g, ok := o["guid"].(string)
			if !ok {
				problems = append(problems, `Organizations organizations list must be structured like this: "organizations": [{"guid": "valid-guid"}]`)
				break
			}
			m.orgs = append(m.orgs, g)
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		writeError(w, http.StatusBadRequest, cfError{1004, "CF-BadRequest", "Bad request: " + strings.Join(problems, ", ")})
		return visibilityMessage{}, false
	}
	return m, true
}

// plan reads the plan of the path and its broker's space; false when the
// answer (404) is written.
func (v *visibilityWrites) plan(w http.ResponseWriter, r *http.Request) (Plan, Space, bool) {
	v.f.mu.RLock()
	defer v.f.mu.RUnlock()
	p, ok := v.f.plans.get(r.PathValue("guid"))
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service plan"))
		return Plan{}, Space{}, false
	}
	o, _ := v.f.offerings.get(p.OfferingGUID)
	b, _ := v.f.brokers.get(o.BrokerGUID)
	sp, _ := v.f.spaces.get(b.SpaceGUID)
	return p, sp, true
}

// update is PATCH: the plan's visibility replaced (ServicePlanVisibilityUpdate#update).
func (v *visibilityWrites) update(w http.ResponseWriter, r *http.Request) { v.write(w, r, false) }

// apply is POST: the orgs added to those the plan has (append_organizations: true).
func (v *visibilityWrites) apply(w http.ResponseWriter, r *http.Request) { v.write(w, r, true) }

func (v *visibilityWrites) write(w http.ResponseWriter, r *http.Request, appendOrgs bool) {
	p, sp, ok := v.plan(w, r)
	if !ok {
		return
	}
	m, ok := readVisibility(w, r)
	if !ok {
		return
	}
	if sp.GUID != "" {
		writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{"cannot update plans with visibility type 'space'"}))
		return
	}
	if !v.orgsExist(m.orgs) {
		// An org that does not exist fails the visibility's validation
		// (validates_presence :organization), raised as
		// ServicePlanVisibilityUpdate::Error, which the controller does not
		// rescue: a 500, the transaction rolled back.
		writeError(w, http.StatusInternalServerError, errUnknown)
		return
	}
	next := access{public: m.kind == visPublic}
	if m.kind == visOrg {
		if cur, _ := v.f.access.get(p.GUID); appendOrgs {
			next.orgs = cur.orgs
		}
		for _, g := range m.orgs {
			if !slices.Contains(next.orgs, g) {
				next.orgs = append(next.orgs, g)
			}
		}
	}
	v.f.access.set(p.GUID, next)
	writeJSON(w, http.StatusOK, presentVisibility(v.f, p.GUID, sp, !appendOrgs))
}

func (v *visibilityWrites) orgsExist(guids []string) bool {
	v.f.mu.RLock()
	defer v.f.mu.RUnlock()
	for _, g := range guids {
		if _, ok := v.f.orgs.get(g); !ok {
			return false
		}
	}
	return true
}

// destroy is DELETE /v3/service_plans/:guid/visibility/:org_guid: 204, the
// org taken from an org-restricted plan (the last one gone, the plan is
// admin-only); 422 for a plan of another type, 404 for an unknown org or
// one the plan is not visible to.
func (v *visibilityWrites) destroy(w http.ResponseWriter, r *http.Request) {
	p, sp, ok := v.plan(w, r)
	if !ok {
		return
	}
	if visibilityType(v.f, p.GUID, sp.GUID) != visOrg {
		writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{"Cannot delete visibilities from non-org-restricted plans"}))
		return
	}
	org := r.PathValue("org_guid")
	if !v.orgsExist([]string{org}) {
		writeError(w, http.StatusNotFound, resourceNotFound("Organization"))
		return
	}
	cur, _ := v.f.access.get(p.GUID)
	i := slices.Index(cur.orgs, org)
	if i < 0 {
		writeError(w, http.StatusNotFound, resourceNotFound("Service plan visibility"))
		return
	}
	v.f.access.set(p.GUID, access{orgs: slices.Delete(cur.orgs, i, i+1)})
	w.WriteHeader(http.StatusNoContent)
}
