package sim

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"

	"gopkg.in/yaml.v3"
)

// diffContext is the configs a diff was made against; the bosh CLI sends it
// back with the deploy (POST /deployments?context=...).
type diffContext struct {
	CloudConfigIDs   []int `json:"cloud_config_ids"`
	RuntimeConfigIDs []int `json:"runtime_config_ids"`
}

type diffAnswer struct {
	Context *diffContext `json:"context,omitempty"`
	Diff    [][2]any     `json:"diff"`
	Error   string       `json:"error,omitempty"`
}

// postDiff is POST /deployments/:name/diff (text/yaml, ?redact=false): the
// posted manifest merged with the current cloud configs, against the
// deployment's manifest merged with the cloud config it was deployed with
// (nothing for a new deployment). Like the Director it always answers 200:
// a manifest it cannot read gives an empty diff and an error, no context.
// Values under properties are redacted unless redact=false.
func (cb *configBook) postDiff(w http.ResponseWriter, r *http.Request, _ string) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "text/yaml" {
		endpointNotFound(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxManifest))
	if err != nil {
		writeError(w, http.StatusBadRequest, codeValidationType, "Reading the manifest: %v", err)
		return
	}
	name, redact := r.PathValue("name"), r.URL.Query().Get("redact") != "false"
	after, err := parseConfig(string(body))
	if err != nil {
		writeJSON(w, http.StatusOK, diffAnswer{Diff: [][2]any{}, Error: "Unable to diff manifest: " + err.Error()})
		return
	}
	setKey(after, "name", name) // the Director diffs under the route's name
	cb.db.mu.RLock()
	ctx := cb.diffContextLocked()
	var before *yaml.Node
	if dep := cb.db.deployments[name]; dep != nil && dep.content != nil {
		before, _ = parseConfig(dep.manifestText())
		if before != nil {
			mergeCloud(before, cb.configTextLocked(dep.cloudConfig))
		}
	}
	for _, id := range ctx.CloudConfigIDs {
		mergeCloud(after, cb.configTextLocked(id))
	}
	cb.db.mu.RUnlock()
	writeJSON(w, http.StatusOK, diffAnswer{Context: &ctx, Diff: yamlLineDiff(before, after, redact)})
}

// diffContextLocked is the ids of the current cloud and runtime configs.
func (cb *configBook) diffContextLocked() diffContext {
	ctx := diffContext{CloudConfigIDs: []int{}, RuntimeConfigIDs: []int{}}
	seen := map[[2]string]bool{}
	for _, c := range slices.Backward(cb.db.configs) {
		key := [2]string{c.typ, c.name}
		if seen[key] {
			continue
		}
		seen[key] = true
		switch c.typ {
		case "cloud":
			ctx.CloudConfigIDs = append(ctx.CloudConfigIDs, c.id)
		case "runtime":
			ctx.RuntimeConfigIDs = append(ctx.RuntimeConfigIDs, c.id)
		}
	}
	slices.Sort(ctx.CloudConfigIDs)
	slices.Sort(ctx.RuntimeConfigIDs)
	return ctx
}

// checkDiffContext checks a deploy's context parameter: every config id it
// names must exist (190025 otherwise, as the Director answers).
func (cb *configBook) checkDiffContext(raw string) error {
	if raw == "" {
		return nil
	}
	var ctx diffContext
	if err := json.Unmarshal([]byte(raw), &ctx); err != nil {
		return &manifestError{code: codeInvalidConfigRef, msg: "Context includes invalid config ID"}
	}
	cb.db.mu.RLock()
	defer cb.db.mu.RUnlock()
	for _, id := range append(ctx.CloudConfigIDs, ctx.RuntimeConfigIDs...) {
		if cb.configTextLocked(id) == "" {
			return &manifestError{code: codeInvalidConfigRef, msg: "Context includes invalid config ID"}
		}
	}
	return nil
}

// codeInvalidConfigRef is DeploymentInvalidConfigReference.
const codeInvalidConfigRef = 190025

// configTextLocked is the content of config id, "" when there is none.
func (cb *configBook) configTextLocked(id int) string {
	for _, c := range cb.db.configs {
		if c.id == id {
			return c.content
		}
	}
	return ""
}

// setKey sets a scalar key of a mapping, adding it when absent.
func setKey(m *yaml.Node, key, value string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}

// mergeCloud adds a cloud config's top-level keys to a manifest, as the
// Director merges them before it diffs.
func mergeCloud(m *yaml.Node, cloud string) {
	c, err := parseConfig(cloud)
	if err != nil {
		return
	}
	for i := 0; i+1 < len(c.Content); i += 2 {
		if keyIndex(m, c.Content[i].Value) < 0 {
			m.Content = append(m.Content, c.Content[i], c.Content[i+1])
		}
	}
}

func keyIndex(m *yaml.Node, key string) int {
	if m == nil {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}
