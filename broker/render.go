package broker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"
)

// ManifestData is what a plan's manifest template (Go text/template) sees.
//
// The rendered manifest must be a YAML mapping. The broker then:
//
//   - sets `name` to DeploymentName ({planID}-{instanceID});
//   - deep-merges the request's parameters into the top-level `properties`
//     mapping: a mapping merges key by key, recursively; any other value
//     (string, number, list, null) replaces what the template put there;
//   - sets `properties.blacksmith` last, so that no parameter can change it:
//     service_id, plan_id, instance_id, organization_guid, space_guid and
//     parameters (the request's parameters as given), from which the
//     reconciler can rebuild the instance's record.
//
// Templates read the parameters as .Params and the instance's generated
// secrets as .Secrets (e.g. {{ .Secrets.password }}).
type ManifestData struct {
	// DeploymentName is the BOSH deployment's name, {planID}-{instanceID}.
	DeploymentName string
	// InstanceID, ServiceID and PlanID identify the instance.
	InstanceID, ServiceID, PlanID string
	// OrganizationGUID and SpaceGUID are the platform's org and space.
	OrganizationGUID, SpaceGUID string
	// Params are the request's parameters (never nil).
	Params map[string]any
	// Secrets are the instance's generated secrets (see secrets.go).
	Secrets map[string]any
}

// CredentialsData is what a plan's credentials template sees. The rendered
// text must be a YAML (or JSON) mapping: the binding's credentials.
type CredentialsData struct {
	ManifestData
	// IPs are the addresses of the deployment's VMs, in the Director's order.
	IPs []string
	// Host is the first of IPs, "" when there is none.
	Host string
	// BindingID and AppGUID identify the binding.
	BindingID, AppGUID string
}

// funcs are the functions templates may call besides text/template's own.
var funcs = template.FuncMap{
	// toJSON writes v as JSON, which YAML reads as a flow value.
	"toJSON": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	// default returns def when v is missing or empty: {{ default 2 .Params.instances }}.
	"default": func(def, v any) any {
		if v == nil || v == "" {
			return def
		}
		return v
	},
}

// execute renders a template to text.
func execute(name, text string, data any) ([]byte, error) {
	t, err := template.New(name).Funcs(funcs).Option("missingkey=zero").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("parsing %s template: %w", name, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return nil, fmt.Errorf("rendering %s template: %w", name, err)
	}
	return out.Bytes(), nil
}

// renderMapping renders a template whose output must be a YAML mapping.
func renderMapping(name, text string, data any) (map[string]any, error) {
	out, err := execute(name, text, data)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("%s template: output is not a YAML mapping: %w", name, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// renderManifest renders a plan's manifest template as documented on ManifestData.
func renderManifest(text string, d ManifestData) ([]byte, error) {
	m, err := renderMapping("manifest", text, d)
	if err != nil {
		return nil, err
	}
	m["name"] = d.DeploymentName
	props, _ := m["properties"].(map[string]any)
	props = deepMerge(props, d.Params)
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
func renderCredentials(text string, d CredentialsData) (map[string]any, error) {
	if text == "" {
		return map[string]any{"host": d.Host, "hosts": d.IPs}, nil
	}
	return renderMapping("credentials", text, d)
}

// usesSecrets says whether a template reads .Secrets.
func usesSecrets(text string) bool { return strings.Contains(text, ".Secrets") }

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
