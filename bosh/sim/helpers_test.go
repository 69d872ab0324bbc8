package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

// reply is an HTTP answer, read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into any (maps, slices, float64...).
func (r reply) json() any {
	var v any
	ExpectWithOffset(1, json.Unmarshal(r.body, &v)).To(Succeed(), "body: %s", r.body)
	return v
}

// client talks to a simulator the way a test needs: no redirects followed,
// optional basic auth or bearer token.
type client struct {
	base        string
	http        *http.Client
	user, pass  string
	bearer      string
	contentType string
	header      http.Header
}

func newClient(d *sim.Director) *client {
	return &client{base: d.URL(), user: "admin", pass: "admin", http: &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// anonymous is a copy of c that sends no credentials.
func (c *client) anonymous() *client {
	cp := *c
	cp.user, cp.pass, cp.bearer = "", "", ""
	return &cp
}

func (c *client) do(method, path string, body []byte) reply {
	return c.doCtx(context.Background(), method, path, body)
}

func (c *client) doCtx(ctx context.Context, method, path string, body []byte) reply {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "bearer "+c.bearer)
	}
	if body != nil {
		req.Header.Set("Content-Type", "text/yaml")
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	res, err := c.http.Do(req)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	return reply{status: res.StatusCode, header: res.Header, body: b}
}

func (c *client) get(path string) reply { return c.do(http.MethodGet, path, nil) }

// getJSON GETs path, expects 200 and decodes the body.
func (c *client) getJSON(path string) any {
	r := c.do(http.MethodGet, path, nil)
	ExpectWithOffset(1, r.status).To(Equal(http.StatusOK), "GET %s: %s", path, r.body)
	var v any
	ExpectWithOffset(1, json.Unmarshal(r.body, &v)).To(Succeed())
	return v
}

// deploy posts a manifest and returns the task id of the 302.
func (c *client) deploy(manifest string) int {
	r := c.do(http.MethodPost, "/deployments", []byte(manifest))
	ExpectWithOffset(1, r.status).To(Equal(http.StatusFound), "POST /deployments: %s", r.body)
	return taskIDOf(r)
}

// deleteDeployment deletes through a task and returns its id.
func (c *client) deleteDeployment(name string) int {
	r := c.do(http.MethodDelete, "/deployments/"+name, nil)
	ExpectWithOffset(1, r.status).To(Equal(http.StatusFound), "DELETE: %s", r.body)
	return taskIDOf(r)
}

func taskIDOf(r reply) int {
	loc := r.header.Get("Location")
	i := strings.LastIndex(loc, "/tasks/")
	ExpectWithOffset(2, i).To(BeNumerically(">=", 0), "Location %q", loc)
	var id int
	ExpectWithOffset(2, json.Unmarshal([]byte(loc[i+len("/tasks/"):]), &id)).To(Succeed())
	return id
}

// task reads GET /tasks/:id.
func (c *client) task(id int) map[string]any {
	return c.getJSON("/tasks/" + itoa(id)).(map[string]any)
}

func (c *client) taskState(id int) string {
	return c.task(id)["state"].(string)
}

// waitTask waits until a task is in a terminal state and returns it.
func (c *client) waitTask(id int) map[string]any {
	EventuallyWithOffset(1, func() string { return c.taskState(id) }).WithTimeout(10 * time.Second).
		Should(BeElementOf("done", "error", "cancelled", "timeout"))
	return c.task(id)
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// ndjson splits NDJSON into decoded lines.
func ndjson(b []byte) []any {
	var out []any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v any
		ExpectWithOffset(1, json.Unmarshal([]byte(line), &v)).To(Succeed(), "line %q", line)
		out = append(out, v)
	}
	return out
}

// start starts a simulator closed after the spec.
func start(opts sim.Options) *sim.Director {
	d, err := sim.New(opts)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(d.Close()).To(Succeed()) })
	return d
}

// redisManifest is a small valid manifest with a VM group and an errand.
func redisManifest(name, version string) string {
	return `---
name: ` + name + `
releases:
- name: redis
  version: ` + version + `
stemcells:
- alias: default
  os: ubuntu-jammy
  version: "1.506"
instance_groups:
- name: redis
  instances: 1
  azs: [z1]
  jobs:
  - name: redis
    release: redis
  vm_type: small
  persistent_disk_type: default
  stemcell: default
  networks:
  - name: services
- name: smoke-tests
  lifecycle: errand
  instances: 1
  azs: [z1]
  jobs:
  - name: smoke-tests
    release: redis
  vm_type: small
  stemcell: default
  networks:
  - name: services
`
}

// waitLocked waits until task holds its deployment's lock: a task is
// "processing" before it takes the lock, so under load a task created after
// it could take the lock first.
func (c *client) waitLocked(task int) {
	GinkgoHelper()
	Eventually(func() []any { return c.getJSON("/locks").([]any) }).Should(ContainElement(
		HaveKeyWithValue("task_id", itoa(task))), "task %d holds its deployment's lock", task)
}
