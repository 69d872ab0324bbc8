package bosh

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// DiffLine is one line of a deployment diff: its text (indented as the
// Director's YAML) and its Change: "added", "removed" or "" for a line
// that holds a changed one.
type DiffLine struct {
	Text   string
	Change string
}

// DeploymentDiff is the Director's answer to POST /deployments/:name/diff.
type DeploymentDiff struct {
	// Context names the cloud and runtime configs the diff was made with;
	// a deploy sent with it (WithDiffContext) is refused by the Director
	// when they changed since.
	Context json.RawMessage
	Lines   []DiffLine
}

// Diff asks the Director what deploying manifest to the deployment name
// would change (unredacted: the caller compares values, and keeps the
// answer out of its logs). The Director answers 200 with an error inside
// when it cannot read the manifest: that comes back as an error naming it.
func (c *Client) Diff(ctx context.Context, name string, manifest []byte) (DeploymentDiff, error) {
	if name == "" {
		return DeploymentDiff{}, fmt.Errorf("diffing deployment: %w", errNoName)
	}
	r := request{method: http.MethodPost, path: deploymentPath(name) + "/diff", query: url.Values{"redact": {"false"}},
		endpoint: epDiff, body: manifest, contentType: "text/yaml"}
	res, err := c.conn.do(ctx, r)
	if err != nil {
		return DeploymentDiff{}, fmt.Errorf("diffing deployment %s: %w", name, err)
	}
	var answer struct {
		Context json.RawMessage `json:"context"`
		Diff    [][2]any        `json:"diff"`
		Error   string          `json:"error"`
	}
	if err := decodeJSON(res.body, &answer); err != nil {
		return DeploymentDiff{}, fmt.Errorf("bosh director %q: decoding the diff of deployment %s: %w", c.conn.name, name, err)
	}
	if answer.Error != "" {
		return DeploymentDiff{}, fmt.Errorf("bosh director %q: diffing deployment %s: %s", c.conn.name, name, answer.Error)
	}
	d := DeploymentDiff{Context: answer.Context, Lines: make([]DiffLine, 0, len(answer.Diff))}
	for i, pair := range answer.Diff {
		text, ok := pair[0].(string)
		if !ok {
			return DeploymentDiff{}, fmt.Errorf("bosh director %q: the diff of deployment %s: line %d is not a string", c.conn.name, name, i+1)
		}
		change, _ := pair[1].(string)
		if pair[1] != nil && change != "added" && change != "removed" {
			return DeploymentDiff{}, fmt.Errorf("bosh director %q: the diff of deployment %s: line %d is marked %v", c.conn.name, name, i+1, pair[1])
		}
		d.Lines = append(d.Lines, DiffLine{Text: text, Change: change})
	}
	return d, nil
}

type diffContextKey struct{}

// WithDiffContext returns a context whose deploys (POST /deployments) carry
// the configs' context of a diff (?context=): the Director then deploys
// with the configs the diff was made against, or refuses the deploy.
func WithDiffContext(ctx context.Context, diffContext json.RawMessage) context.Context {
	return context.WithValue(ctx, diffContextKey{}, diffContext)
}

// diffContextOf is the context set by WithDiffContext, or nil.
func diffContextOf(ctx context.Context) json.RawMessage {
	raw, _ := ctx.Value(diffContextKey{}).(json.RawMessage)
	return raw
}
