package broker

import (
	"fmt"
	"maps"

	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// renderManifest renders a plan's manifest template (see catalog.Template:
// every value a template writes is one YAML value) and then:
//
//   - sets `name` to DeploymentName ({planID}-{instanceID});
//   - when merge is true (the plan's merge_parameters), deep-merges the
//     request's parameters into the top-level `properties` mapping: a
//     mapping merges key by key, recursively; any other value (string,
//     number, list, null) replaces what the template put there. Parameters
//     reach this point only when the plan's schema (or its
//     accept_any_parameters) let them through;
//   - sets `properties.blacksmith` last, so that no parameter can change it:
//     service_id, plan_id, instance_id, organization_guid, space_guid and
//     parameters (the request's parameters as given), from which the
//     reconciler can rebuild the instance's record.
func renderManifest(t *catalog.Template, d catalog.ManifestData, merge bool) ([]byte, error) {
	m, err := t.RenderMapping(d)
	if err != nil {
		return nil, err
	}
	m["name"] = d.DeploymentName
	props, _ := m["properties"].(map[string]any)
	if merge {
		props = deepMerge(props, d.Params)
	} else if props == nil {
		props = map[string]any{}
	}
	props["blacksmith"] = map[string]any{
		"service_id":        d.ServiceID,
		"plan_id":           d.PlanID,
		"instance_id":       d.InstanceID,
		"organization_guid": d.OrganizationGUID,
		"space_guid":        d.SpaceGUID,
		"parameters":        d.Params,
	}
	m["properties"] = props
	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding manifest: %w", err)
	}
	return out, nil
}

// renderCredentials renders a plan's credentials template; without one the
// credentials are the deployment's addresses.
func renderCredentials(t *catalog.Template, d catalog.CredentialsData) (map[string]any, error) {
	if t == nil {
		return map[string]any{"host": d.Host, "hosts": d.IPs}, nil
	}
	return t.RenderMapping(d)
}

// deepMerge merges src into a copy of dst: mappings key by key, recursively;
// any other value of src replaces dst's.
func deepMerge(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	maps.Copy(out, dst)
	for k, v := range src {
		sub, isMap := v.(map[string]any)
		cur, curIsMap := out[k].(map[string]any)
		if isMap && curIsMap {
			out[k] = deepMerge(cur, sub)
			continue
		}
		out[k] = v
	}
	return out
}
