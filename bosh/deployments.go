package bosh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/cloudfoundry-community/gogobosh"
)

// Deployment is one entry of GET /deployments.
type Deployment struct {
	// Name is the deployment's name.
	Name string `json:"name"`
	// Releases are the release versions the deployment runs ("latest" in its
	// manifest resolved), kept in the cheap listing.
	Releases []gogobosh.Resource `json:"releases"`
	// Stemcells are the stemcells the deployment uses: absent from the cheap
	// listing that Deployments asks for (exclude_stemcells drops the field);
	// GET /stemcells (Stemcells) says which deployments use each version.
	Stemcells []gogobosh.Resource `json:"stemcells"`
	// Locked says a task holds the deployment's lock.
	Locked bool `json:"locked"`
	// Teams are the teams that may read the deployment.
	Teams []string `json:"teams"`
	// CloudConfig is "none", "latest" or "outdated"; empty in the cheap listing.
	CloudConfig string `json:"cloud_config"`
	// Director is the name of the Director that listed it, when several are
	// reconciled (not part of the Director's answer).
	Director string `json:"-"`
}

// Deployments lists the deployments in the cheap form: configs and stemcells
// excluded, releases and locks kept.
func (c *Client) Deployments(ctx context.Context) ([]Deployment, error) {
	q := url.Values{"exclude_configs": {"true"}, "exclude_releases": {"false"}, "exclude_stemcells": {"true"}}
	var out []Deployment
	if err := c.conn.getJSON(ctx, request{path: "/deployments", query: q, endpoint: epDeployments}, &out); err != nil {
		return nil, fmt.Errorf("listing deployments: %w", err)
	}
	return out, nil
}

// Manifest returns a deployment's manifest; ErrDeploymentNotFound when it does not exist.
func (c *Client) Manifest(ctx context.Context, name string) (string, error) {
	var m gogobosh.Manifest
	if err := c.conn.getDeploymentJSON(ctx, name, "", epDeployment, &m); err != nil {
		return "", fmt.Errorf("getting manifest of deployment %s: %w", name, err)
	}
	return m.Manifest, nil
}

// VMs lists a deployment's VMs from plain /vms, which answers without a task
// (never ?format=full, which starts a task that contacts every agent).
func (c *Client) VMs(ctx context.Context, name string) ([]VM, error) {
	var out []VM
	if err := c.conn.getDeploymentJSON(ctx, name, "/vms", epVMs, &out); err != nil {
		return nil, fmt.Errorf("listing VMs of deployment %s: %w", name, err)
	}
	return out, nil
}

// Instances lists a deployment's instances, those without a VM included.
func (c *Client) Instances(ctx context.Context, name string) ([]Instance, error) {
	var out []Instance
	if err := c.conn.getDeploymentJSON(ctx, name, "/instances", epInstances, &out); err != nil {
		return nil, fmt.Errorf("listing instances of deployment %s: %w", name, err)
	}
	return out, nil
}

// Deploy creates or updates the deployment that manifest names, and returns
// the Director's task. When the task was created but could not be read, the
// returned Task carries its ID beside the error.
func (c *Client) Deploy(ctx context.Context, manifest []byte) (Task, error) {
	r := request{
		method: http.MethodPost, path: "/deployments", endpoint: epDeployments,
		body: manifest, contentType: "text/yaml",
	}
	if dc := diffContextOf(ctx); len(dc) > 0 {
		r.query = url.Values{"context": {string(dc)}}
	}
	t, err := c.conn.createTask(ctx, r)
	if err != nil {
		return t, fmt.Errorf("deploying: %w", err)
	}
	return t, nil
}

// DeleteDeployment deletes a deployment (force: ignoring errors of its VMs)
// and returns the Director's task. Deleting a deployment that does not exist
// gives a task that ends done.
func (c *Client) DeleteDeployment(ctx context.Context, name string, force bool) (Task, error) {
	if name == "" {
		return Task{}, fmt.Errorf("deleting deployment: %w", errNoName)
	}
	r := request{method: http.MethodDelete, path: deploymentPath(name), endpoint: epDeployment}
	if force {
		r.query = url.Values{"force": {"true"}}
	}
	t, err := c.conn.createTask(ctx, r)
	if err != nil {
		return t, fmt.Errorf("deleting deployment %s: %w", name, err)
	}
	return t, nil
}

// The states ChangeState brings a deployment's instances to, as the bosh
// CLI's start, stop and stop --hard ask them.
const (
	StateStarted  = "started"
	StateStopped  = "stopped"
	StateDetached = "detached" // stop --hard: the VMs deleted, the persistent disks kept
	// StateRecreate is `bosh recreate` (converging, its default): every VM
	// deleted and created again from the manifest the Director holds
	// (bosh-cli director/deployment.go, Recreate and ChangeJobState; the
	// Director's deployments_controller.rb:37, PUT /:deployment/jobs/:job).
	StateRecreate = "recreate"
)

// ChangeState brings every instance of the deployment to state (StateStarted,
// StateStopped, StateDetached or StateRecreate) as `bosh -d NAME
// start|stop [--hard]|recreate` does:
// PUT /deployments/NAME/jobs/* with an empty text/yaml body; the Director
// redeploys the manifest it holds with the new state, in a task it returns.
func (c *Client) ChangeState(ctx context.Context, name, state string) (Task, error) {
	if name == "" {
		return Task{}, fmt.Errorf("changing the state of a deployment: %w", errNoName)
	}
	if state != StateStarted && state != StateStopped && state != StateDetached && state != StateRecreate {
		return Task{}, fmt.Errorf("changing the state of deployment %s: unknown state %q", name, state)
	}
	t, err := c.conn.createTask(ctx, request{method: http.MethodPut, path: deploymentPath(name) + "/jobs/*",
		query: url.Values{"state": {state}}, endpoint: epJobs, body: []byte{}, contentType: "text/yaml"})
	if err != nil {
		return t, fmt.Errorf("bringing deployment %s to %s: %w", name, state, err)
	}
	return t, nil
}

// errNoName refuses an empty deployment name before any request is sent:
// "/deployments/" + "" is another route, or none.
var errNoName = errors.New("the deployment name is empty")

// deploymentPath is the escaped path of a deployment.
func deploymentPath(name string) string { return "/deployments/" + url.PathEscape(name) }

// getDeploymentJSON GETs the deployment's path followed by sub and decodes
// the answer into out; an empty name is refused without a request.
func (c *conn) getDeploymentJSON(ctx context.Context, name, sub, endpoint string, out any) error {
	if name == "" {
		return errNoName
	}
	return c.getJSON(ctx, request{path: deploymentPath(name) + sub, endpoint: endpoint}, out)
}

// getJSON sends a GET (r.method is ignored) and decodes its JSON answer into out.
func (c *conn) getJSON(ctx context.Context, r request, out any) error {
	return c.getDecoded(ctx, r, func(body []byte) error { return decodeJSON(body, out) })
}

// getDecoded sends a GET (r.method is ignored) and reads its answer with decode.
func (c *conn) getDecoded(ctx context.Context, r request, decode func([]byte) error) error {
	r.method = http.MethodGet
	res, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	if res.status != http.StatusOK {
		return parseAPIError(c.name, r.method, r.path, res.status, res.body)
	}
	if err := decode(res.body); err != nil {
		return fmt.Errorf("bosh director %q: decoding %s %s: %w", c.name, r.method, r.path, err)
	}
	return nil
}

// VMStates asks the Director for the state of a deployment's VMs from
// their agents: GET /deployments/:name/vms?format=full starts a task that
// contacts every agent (up to 5 s each on the Director's side), polled
// every poll (DefaultPoll when 0), whose result has a line per VM. It costs
// the Director a task and at least three requests: the redirect, a poll,
// the result.
func (c *Client) VMStates(ctx context.Context, name string, poll time.Duration) ([]VMState, error) {
	if name == "" {
		return nil, fmt.Errorf("getting VM states: %w", errNoName)
	}
	if poll <= 0 {
		poll = DefaultPoll
	}
	r := request{method: http.MethodGet, path: deploymentPath(name) + "/vms", query: url.Values{"format": {"full"}}, endpoint: epVMs}
	res, err := c.conn.do(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("getting VM states of deployment %s: %w", name, err)
	}
	id, err := taskID(res)
	if err != nil {
		return nil, fmt.Errorf("bosh director %q: GET %s: %w", c.conn.name, r.path, err)
	}
	c.conn.metrics.taskCreated(c.conn.name)
	// The task needs the agents' answers: look at it only after a poll.
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("getting VM states of deployment %s: %w", name, ctx.Err())
	case <-time.After(poll):
	}
	t, err := c.WaitTask(ctx, id, poll)
	if err != nil {
		return nil, fmt.Errorf("getting VM states of deployment %s: %w", name, err)
	}
	if !t.Succeeded() {
		return nil, fmt.Errorf("getting VM states of deployment %s: task %d ended %s: %s", name, t.ID, t.State, shorten(t.Result))
	}
	res, err = c.conn.do(ctx, request{method: http.MethodGet, path: taskPath(t.ID) + "/output",
		query: url.Values{"type": {"result"}}, endpoint: epTaskOutput})
	if err != nil {
		return nil, fmt.Errorf("getting VM states of deployment %s: %w", name, err)
	}
	out, err := parseVMStates(res.body)
	if err != nil {
		return nil, fmt.Errorf("getting VM states of deployment %s: %w", name, err)
	}
	return out, nil
}

// parseVMStates reads a vm-state task's result: a JSON object a line;
// blank lines are skipped. The body is already bounded (answerLimit).
func parseVMStates(body []byte) ([]VMState, error) {
	var out []VMState
	n := 0
	for line := range bytes.Lines(body) {
		n++
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		var v VMState
		if err := decodeJSON(line, &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, v)
	}
	return out, nil
}
