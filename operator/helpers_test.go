package operator_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/internal/basicauth"
	"github.com/blacksmith-reconciler/blacksmith/operator"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

const (
	brokerUser = "broker"
	brokerPass = "s3cret"
	// opUser and opPass are the operator's admin credentials (/b/*).
	opUser     = "operator"
	opPass     = "op-s3cret"
	apiVersion = "2.17"
)

const manifestTemplate = `name: ignored-by-the-broker
releases:
- {name: redis, version: "16.1.0"}
stemcells:
- {alias: default, os: ubuntu-jammy, version: "1.0"}
instance_groups:
- name: redis
  instances: 1
  azs: [z1]
  vm_type: default
  stemcell: default
  networks: [{name: default}]
  jobs:
  - name: redis
    release: redis
    properties:
      password: {{ .Secrets.password }}
`

// testCatalog: service redis with plan redis-small.
func testCatalog() *catalog.Catalog {
	return versionedCatalog("", "16.1.0")
}

// versionedCatalog is testCatalog with redis-small at maintenance_info
// version ("": none), deploying that release of redis.
func versionedCatalog(version, release string) *catalog.Catalog {
	m, err := catalog.ParseTemplate("manifest.yml", strings.Replace(manifestTemplate, "16.1.0", release, 1))
	Expect(err).NotTo(HaveOccurred())
	plan := catalog.Plan{ID: "redis-small", Name: "small", Description: "one node", ServiceID: "redis", Manifest: m}
	if version != "" {
		plan.MaintenanceInfo = &catalog.MaintenanceInfo{Version: version}
	}
	return &catalog.Catalog{Services: []catalog.Service{
		{ID: "redis", Name: "redis", Description: "Redis", Plans: []catalog.Plan{plan}},
	}}
}

// env is a running reconciler and a broker on a real Vault mount and a
// Director simulator, served over HTTP as the daemon serves them: the OSB
// API behind the broker's credentials, and the operator's endpoints behind the operator's,
// metrics and cross-origin protection.
type env struct {
	store    *vault.Store
	director *sim.Director
	server   *httptest.Server
}

var mounts atomic.Int64

func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newEnv starts the reconciler (stopped when the spec ends) and serves it.
func newEnv() *env {
	GinkgoHelper()
	return newEnvWith(envOptions{})
}

// envOptions tunes newEnvWith.
type envOptions struct {
	// catalog is the OSB API's (nil: testCatalog()).
	catalog *catalog.Catalog
	// upgraded is the catalog of the reconciler and of the broker that
	// renders its fleet upgrades, when it is not the OSB API's (nil: the
	// same): a plan's newer version.
	upgraded *catalog.Catalog
}

// newEnvWith is newEnv tuned by o.
func newEnvWith(o envOptions) *env {
	GinkgoHelper()
	mount := fmt.Sprintf("kv%d", mounts.Add(1))
	Expect(vaultServer.EnableKV(mount, 2)).To(Succeed())
	store, err := vault.New(context.Background(), vault.Options{
		Address: vaultServer.Addr, Token: vaultServer.Token, Mount: mount, Logger: testLogger(),
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(store.Close)
	director, err := sim.New(sim.Options{TaskDuration: 200 * time.Millisecond})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(director.Close)
	client, err := bosh.New(bosh.Options{Address: director.URL(), Username: sim.DefaultUsername,
		Password: sim.DefaultPassword, Timeout: 5 * time.Second, Logger: testLogger()})
	Expect(err).NotTo(HaveOccurred())

	cat := cmp.Or(o.catalog, testCatalog())
	cfg := config.Default().Reconciler
	cfg.RetryDelay = 100 * time.Millisecond
	b, err := broker.New(broker.Options{Catalog: cat, Directors: []broker.NamedDirector{{Director: client, Reader: client}}, Store: store,
		Username: brokerUser, Password: brokerPass, Logger: testLogger()})
	Expect(err).NotTo(HaveOccurred())
	opts := reconciler.Options{Config: cfg, Store: store,
		Directors:  []ports.NamedDirector{{Director: client, Tasks: client, Deployer: client}},
		Operations: b, Catalog: cat, Logger: testLogger()}
	if o.upgraded != nil { // as the daemon: a broker of the reconciler's catalog renders and holds
		r, err := broker.New(broker.Options{Catalog: o.upgraded, Directors: []broker.NamedDirector{{Director: client, Reader: client}},
			Store: store, Username: brokerUser, Password: brokerPass, Logger: testLogger()})
		Expect(err).NotTo(HaveOccurred())
		opts.Catalog, opts.Operations, opts.Renderer, opts.Hold = o.upgraded, r, r, r.HoldInstance
		opts.UpgradePoll = 20 * time.Millisecond
	}
	m, err := reconciler.New(opts)
	Expect(err).NotTo(HaveOccurred())

	// guard is what the daemon puts in front of the operator's endpoints.
	guard := func(h http.Handler) http.Handler {
		return b.Observe(basicauth.RequireRole([]basicauth.User{{Username: opUser, Password: opPass, Role: basicauth.Admin}},
			http.NewCrossOriginProtection().Handler(h)))
	}
	mux := http.NewServeMux()
	mux.Handle("/b/reconcile", guard(operator.ReconcileHandler(m, testLogger())))
	mux.Handle("/b/upgrades", guard(operator.UpgradesHandler(m.Upgrades(), testLogger())))
	instances := guard(operator.InstancesHandler(m.Views(), m, testLogger()))
	mux.Handle("/b/instances/", instances)
	mux.Handle("/b/instances", guard(operator.InstanceListHandler(m.Views().List, testLogger())))
	mux.Handle("/b/runs", instances)
	mux.Handle("/", b.Handler())
	e := &env{store: store, director: director, server: httptest.NewServer(mux)}
	DeferCleanup(e.server.Close)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	loops := m.Loops() // the runs, the watch and the fleet upgrades: the health loop is not these specs' concern
	go func() {
		g, gctx := errgroup.WithContext(ctx)
		for _, p := range []reconciler.Part{loops.Runs, loops.Watch, loops.Upgrades} {
			g.Go(func() error { return p.Serve(gctx) })
		}
		done <- g.Wait()
	}()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
	})
	return e
}

// answer is an HTTP answer with its JSON body decoded.
type answer struct {
	Status int
	Body   map[string]any
	Raw    string
}

// request sends an authenticated request with body (JSON, "" for none):
// the broker's credentials to /v2/*, the operator's elsewhere.
func (e *env) request(method, path, body string) answer {
	GinkgoHelper()
	user, pass := opUser, opPass
	if strings.HasPrefix(path, "/v2/") {
		user, pass = brokerUser, brokerPass
	}
	return e.send(method, path, body, func(req *http.Request) { req.SetBasicAuth(user, pass) })
}

// send sends a request with body (JSON, "" for none), as set changes it
// (its credentials, its headers).
func (e *env) send(method, path, body string, set func(*http.Request)) answer {
	GinkgoHelper()
	req, err := http.NewRequest(method, e.server.URL+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("X-Broker-API-Version", apiVersion)
	req.Header.Set("Content-Type", "application/json")
	set(req)
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	a := answer{Status: res.StatusCode, Raw: string(raw)}
	_ = json.Unmarshal(raw, &a.Body)
	return a
}

// provisioned provisions an instance through the OSB API and waits until
// last_operation says it succeeded.
func (e *env) provisioned(id, planID string) {
	GinkgoHelper()
	path := "/v2/service_instances/" + id
	a := e.request("PUT", path+"?accepts_incomplete=true", fmt.Sprintf(
		`{"service_id":"redis","plan_id":%q,"organization_guid":"org-1","space_guid":"space-1"}`, planID))
	Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
	Eventually(func() any {
		return e.request("GET", path+"/last_operation", "").Body["state"]
	}).WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal("succeeded"))
}

func (e *env) record(id string) *vault.Record {
	GinkgoHelper()
	r, err := e.store.Record(context.Background(), id)
	Expect(err).NotTo(HaveOccurred())
	return r
}
