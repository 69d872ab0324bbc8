package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

const (
	brokerUser = "broker"
	brokerPass = "s3cret"
	apiVersion = "2.17"
)

const manifestTemplate = `name: ignored-by-the-broker
releases:
- {name: redis, version: "16.1.0"}
stemcells:
- {alias: default, os: ubuntu-jammy, version: "1.0"}
instance_groups:
- name: redis
  instances: {{ default 1 .Params.instances }}
  azs: [z1]
  vm_type: default
  stemcell: default
  networks: [{name: default}]
  jobs:
  - name: redis
    release: redis
    properties:
      password: {{ .Secrets.password }}
properties:
  maxmemory: 64mb
  tuning: {io_threads: 1, lazyfree: true}
`

const credentialsTemplate = `host: {{ .Host }}
hosts: {{ toJSON .IPs }}
port: 6379
password: {{ .Secrets.password }}
binding: {{ .BindingID }}
`

// mustTemplate parses a template as the catalog does.
func mustTemplate(name, text string) *catalog.Template {
	t, err := catalog.ParseTemplate(name, text)
	if err != nil {
		panic(err)
	}
	return t
}

// testCatalog: service redis (limit 3) with plans small (limit 2) and large
// (updatable, polled every 3 s at least), both taking any parameters and merging them into the
// manifest's properties; service memo, not bindable, taking no parameters.
func testCatalog() *catalog.Catalog {
	m, c := mustTemplate("manifest.yml", manifestTemplate), mustTemplate("credentials.yml", credentialsTemplate)
	return &catalog.Catalog{Services: []catalog.Service{
		{ID: "redis", Name: "redis", Description: "Redis", Bindable: true, Tags: []string{"kv"}, Limit: 3, Shareable: true, Plans: []catalog.Plan{
			{ID: "redis-small", Name: "small", Description: "one node", Limit: 2, ServiceID: "redis",
				Manifest: m, Credentials: c, AcceptAnyParameters: true, MergeParameters: true},
			{ID: "redis-large", Name: "large", Description: "three nodes", Updatable: true, ServiceID: "redis", MaximumPollingDuration: 7200, PollingInterval: 3,
				Manifest: m, Credentials: c, AcceptAnyParameters: true, MergeParameters: true},
		}},
		{ID: "memo", Name: "memo", Description: "not bindable", Bindable: false, Plans: []catalog.Plan{
			{ID: "memo-one", Name: "one", Description: "one", ServiceID: "memo", Manifest: m},
		}},
	}}
}

// env is a broker on a real Vault mount and a Director simulator, served over HTTP.
type env struct {
	store    *vault.Store
	director *sim.Director
	client   *bosh.Client
	broker   *broker.Broker
	server   *httptest.Server
	registry *prometheus.Registry
}

var mounts atomic.Int64

// newStore is a Store on a fresh KV v2 mount of the suite's Vault.
func newStore() *vault.Store {
	GinkgoHelper()
	mount := fmt.Sprintf("kv%d", mounts.Add(1))
	Expect(vaultServer.EnableKV(mount, 2)).To(Succeed())
	store, err := vault.New(context.Background(), vault.Options{
		Address: vaultServer.Addr, Token: vaultServer.Token, Mount: mount, Logger: testLogger(),
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(store.Close)
	return store
}

func newDirector() (*sim.Director, *bosh.Client) {
	GinkgoHelper()
	d, err := sim.New(sim.Options{TaskDuration: 200 * time.Millisecond})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(d.Close)
	return d, newClient(d.URL())
}

func newClient(address string) *bosh.Client {
	GinkgoHelper()
	c, err := bosh.New(bosh.Options{Address: address, Username: sim.DefaultUsername, Password: sim.DefaultPassword,
		Timeout: 5 * time.Second, Logger: testLogger()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newEnv builds the broker; tune changes its options first.
func newEnv(tune ...func(*broker.Options)) *env {
	GinkgoHelper()
	e := &env{store: newStore()}
	e.director, e.client = newDirector()
	return newEnvOn(e, tune...)
}

// newEnvOn builds a broker on on's Vault mount and Director.
func newEnvOn(on *env, tune ...func(*broker.Options)) *env {
	GinkgoHelper()
	e := &env{store: on.store, director: on.director, client: on.client, registry: prometheus.NewRegistry()}
	opts := broker.Options{
		Catalog: testCatalog(), Directors: []broker.NamedDirector{{Director: e.client, Reader: e.client}}, Store: e.store,
		Username: brokerUser, Password: brokerPass, Metrics: broker.NewMetrics(e.registry), Logger: testLogger(),
		// Specs see a deletion finish as 410 at once; one spec of
		// last_operation keeps the remembered "succeeded" (RememberDeleted).
		RememberDeleted: time.Nanosecond,
	}
	for _, t := range tune {
		t(&opts)
	}
	b, err := broker.New(opts)
	Expect(err).NotTo(HaveOccurred())
	e.broker = b
	e.server = httptest.NewServer(b.Handler())
	DeferCleanup(e.server.Close)
	return e
}

// answer is an HTTP answer with its JSON body decoded.
type answer struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

// request sends an authenticated OSB request (accepts_incomplete=true unless
// the path says otherwise).
func (e *env) request(method, path string, body any) answer {
	GinkgoHelper()
	return e.requestAs(brokerUser, brokerPass, apiVersion, method, path, body)
}

func (e *env) requestAs(user, pass, version, method, path string, body any) answer {
	GinkgoHelper()
	return e.requestWith(user, pass, version, nil, method, path, body)
}

// requestWith is requestAs with more headers.
func (e *env) requestWith(user, pass, version string, headers map[string]string, method, path string, body any) answer {
	GinkgoHelper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.server.URL+path, rd)
	Expect(err).NotTo(HaveOccurred())
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	if version != "" {
		req.Header.Set("X-Broker-API-Version", version)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	a := answer{Status: res.StatusCode, Header: res.Header, Raw: string(raw)}
	_ = json.Unmarshal(raw, &a.Body)
	return a
}

func provisionBody(planID string, params map[string]any) map[string]any {
	body := map[string]any{"service_id": serviceOf(planID), "plan_id": planID,
		"organization_guid": "org-1", "space_guid": "space-1"}
	if params != nil {
		body["parameters"] = params
	}
	return body
}

func serviceOf(planID string) string {
	_, p, _ := testCatalog().Plan(planID)
	return p.ServiceID
}

func instancePath(id string) string { return "/v2/service_instances/" + id }

// provision provisions and expects 202.
func (e *env) provision(id, planID string, params map[string]any) {
	GinkgoHelper()
	a := e.request("PUT", instancePath(id)+"?accepts_incomplete=true", provisionBody(planID, params))
	Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
}

// lastOperation returns the state and description.
func (e *env) lastOperation(id string) (int, string, string) {
	GinkgoHelper()
	a := e.request("GET", instancePath(id)+"/last_operation", nil)
	state, _ := a.Body["state"].(string)
	desc, _ := a.Body["description"].(string)
	return a.Status, state, desc
}

// eventuallyState waits for last_operation to answer state.
func (e *env) eventuallyState(id, state string) {
	GinkgoHelper()
	Eventually(func() string {
		_, s, _ := e.lastOperation(id)
		return s
	}).WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(state))
}

func (e *env) record(id string) *vault.Record {
	GinkgoHelper()
	r, err := e.store.Record(context.Background(), id)
	Expect(err).NotTo(HaveOccurred())
	return r
}

// metric returns the value of a counter series (0 when absent).
func metric(reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	GinkgoHelper()
	families, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					continue series
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

func fmtManifest(name string) string { return fmt.Sprintf(bareManifest, name) }

// simFailure makes the simulator answer 503 to every request to endpoint.
func simFailure(endpoint string) sim.Failure {
	return sim.Failure{Endpoint: endpoint, Status: http.StatusServiceUnavailable}
}

// provisioned provisions an instance and waits until it succeeded.
func (e *env) provisioned(id, planID string) {
	GinkgoHelper()
	e.provision(id, planID, nil)
	e.eventuallyState(id, "succeeded")
}

// deployed creates a deployment on the Director behind the broker's back (as
// one the reconciler adopts) and waits for its task.
func deployed(name string, e *env) {
	GinkgoHelper()
	ctx := context.Background()
	task, err := e.client.Deploy(ctx, []byte(fmtManifest(name)))
	Expect(err).NotTo(HaveOccurred())
	task, err = e.client.WaitTask(ctx, task.ID, 50*time.Millisecond)
	Expect(err).NotTo(HaveOccurred())
	Expect(task.Succeeded()).To(BeTrue(), task.Result)
}
