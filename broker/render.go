package broker

import (
	"context"
	"fmt"
	"maps"

	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/vault"
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

// RenderManifest renders instance id's manifest as a provision or update of
// rec would deploy it: rec's plan's current manifest template, with rec's
// recorded parameters (and organization and space) and the instance's
// stored secrets (and, for a per_binding plan, its live bindings with
// theirs), for rec's deployment. It generates no secret: an instance
// whose template uses secrets and that has none stored is an error. The
// reconciler's redeploys (remediation, rollback) deploy an owned instance
// only through it, never a manifest found on a Director.
func (b *Broker) RenderManifest(ctx context.Context, id string, rec *vault.Record) (string, error) {
	return b.render.record(ctx, id, rec, false)
}

// RenderHeld is RenderManifest for an instance whose deployment runs: one
// without stored secrets is rendered with stand-ins
// (operation.StandIns), which the running manifest's configuration-server
// variables replace (operation.KeepVariables) and operation.CheckHeld
// refuses where they could not. No secret is generated over what runs.
func (b *Broker) RenderHeld(ctx context.Context, id string, rec *vault.Record) (string, error) {
	return b.render.record(ctx, id, rec, true)
}
