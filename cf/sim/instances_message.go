package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// instanceMessage is a service instance create or update body, checked as
// CC's ServiceInstanceCreateManagedMessage and ServiceInstanceUpdateManagedMessage
// check it (reduced: see README "Not simulated").
type instanceMessage struct {
	given        map[string]bool
	kind, name   string
	space, plan  string // relationships' guids
	parameters   map[string]any
	maintenance  string // maintenance_info.version
	problems     []string
	userProvided bool
}

func (m instanceMessage) has(key string) bool { return m.given[key] }

// readObject decodes a JSON object body, or answers CC's parse error.
func readObject(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body == nil {
		writeError(w, http.StatusBadRequest, cfError{1001, "CF-MessageParseError", "Request invalid due to parse error: invalid request body"})
		return nil, false
	}
	return body, true
}

// readInstanceMessage reads a create (create true) or update body.
func readInstanceMessage(body map[string]any, create bool) instanceMessage {
	m := instanceMessage{given: map[string]bool{}}
	allowed := []string{"name", "tags", "parameters", "relationships", "metadata", "maintenance_info"}
	if create {
		allowed = []string{"type", "name", "tags", "parameters", "relationships", "metadata"}
	}
	var unknown []string
	for k := range body {
		m.given[k] = true
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, "'"+k+"'")
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		m.problems = append(m.problems, "Unknown field(s): "+strings.Join(unknown, ", "))
	}
	if create {
		m.kind, _ = body["type"].(string)
		m.userProvided = m.kind == TypeUserProvided
		if m.kind != TypeManaged && !m.userProvided {
			m.problems = append(m.problems, "Type must be one of 'managed', 'user-provided'")
		}
	}
	m.readName(body, create)
	m.readParameters(body)
	m.readRelationships(body, create)
	if mi, ok := body["maintenance_info"]; ok && mi != nil {
		obj, isObj := mi.(map[string]any)
		v, isString := obj["version"].(string)
		if !isObj || !isString {
			m.problems = append(m.problems, "Maintenance info version must be a semantic version")
		}
		m.maintenance = v
	}
	return m
}

func (m *instanceMessage) readName(body map[string]any, create bool) {
	v, given := body["name"]
	name, isString := v.(string)
	switch {
	case given && v != nil && !isString:
		m.problems = append(m.problems, "Name must be a string")
	case create && strings.TrimSpace(name) == "":
		m.problems = append(m.problems, "Name can't be blank")
	}
	m.name = name
}

func (m *instanceMessage) readParameters(body map[string]any) {
	v, given := body["parameters"]
	if !given || v == nil {
		return
	}
	p, ok := v.(map[string]any)
	if !ok {
		m.problems = append(m.problems, "Parameters must be an object")
	}
	m.parameters = p
}

// readRelationships reads relationships.space (create) and relationships.service_plan.
func (m *instanceMessage) readRelationships(body map[string]any, create bool) {
	rel, _ := body["relationships"].(map[string]any)
	guid := func(key string) (string, bool) {
		obj, _ := rel[key].(map[string]any)
		data, _ := obj["data"].(map[string]any)
		g, ok := data["guid"].(string)
		return g, ok && g != ""
	}
	var ok bool
	if m.plan, ok = guid("service_plan"); !ok && (create || rel["service_plan"] != nil) && !m.userProvided {
		m.problems = append(m.problems, fmt.Sprintf("Relationships Service plan must be structured like this: %q", `"service_plan: {"data": {"guid": "valid-guid"}}"`))
	}
	if !create {
		return
	}
	if m.space, ok = guid("space"); !ok {
		m.problems = append(m.problems, fmt.Sprintf("Relationships Space must be structured like this: %q", `"space: {"data": {"guid": "valid-guid"}}"`))
	}
}
