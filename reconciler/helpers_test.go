package reconciler_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var (
	vaultServer *testvault.Server
	mounts      atomic.Int64
)

// The real parts the reconciler is wired with.
var (
	_ ports.Director = (*bosh.Client)(nil)
	_ ports.Tasks    = (*bosh.Client)(nil)
)

var _ = BeforeSuite(func() {
	// The bosh client clones http.DefaultTransport. Without keep-alives it
	// leaves no connection that was dialed but never used, which the
	// simulator's graceful shutdown would wait 5 s for (net/http treats such
	// a connection as busy until it is 5 s old).
	http.DefaultTransport.(*http.Transport).DisableKeepAlives = true
	vaultServer = testvault.ForSuite(testvault.Options{})
})

// testCatalog holds the plans the simulator seeds by default.
var testCatalog = &catalog.Catalog{Services: []catalog.Service{
	{ID: "redis", Name: "redis", Plans: []catalog.Plan{
		{ID: "redis-small", Name: "small", ServiceID: "redis"},
		{ID: "redis-large", Name: "large", ServiceID: "redis"},
	}},
	{ID: "postgresql", Name: "postgresql", Plans: []catalog.Plan{
		{ID: "postgresql-small", Name: "small", ServiceID: "postgresql"},
	}},
}}

// testConfig is a reconciler configuration with short delays.
func testConfig() config.ReconcilerConfig {
	c := config.Default().Reconciler
	c.Interval = time.Hour
	c.MaxConcurrency = 3
	c.BatchSize = 4
	c.RetryDelay = 20 * time.Millisecond
	c.OrphanGracePeriod = 0
	c.StopTimeout = 5 * time.Second
	c.HealthSweep = 0 // the health specs sweep; the others count the Director's requests without it
	return c
}

// env is a simulator, a fresh KV mount of the suite's real Vault, and a
// reconciler between them.
type env struct {
	sim   *sim.Director
	bosh  *bosh.Client
	store *vault.Store
	mount string
	proxy *vaultProxy // nil unless asked for
	reg   *prometheus.Registry
	cfg   config.ReconcilerConfig
	m     *reconciler.Manager
	names []string       // seeded deployments, sorted
	logs  *gbytes.Buffer // the reconciler's logs, debug level and up
	clock *skewedClock   // the reconciler's clock; nil: the real one
}

// envOptions tunes newEnv.
type envOptions struct {
	seed   int
	sim    sim.Options
	config func(*config.ReconcilerConfig)
	proxy  bool // put a fault-injecting proxy in front of Vault
	clock  bool // give the reconciler a clock the spec moves on (env.clock)
}

func newEnv(o envOptions) *env {
	GinkgoHelper()
	e := &env{cfg: testConfig(), reg: prometheus.NewRegistry(), logs: gbytes.NewBuffer()}
	if o.clock {
		e.clock = &skewedClock{}
	}
	if o.config != nil {
		o.config(&e.cfg)
	}
	if o.sim.AgentTimeout == 0 {
		o.sim.AgentTimeout = 20 * time.Millisecond // the Director's 5 s, three times, is what the health loop's specs set themselves
	}
	var err error
	e.sim, err = sim.New(o.sim)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(e.sim.Close()).To(Succeed()) })
	e.names = sortedNames(e.sim.SeedDeployments(o.seed, nil))
	e.bosh, err = bosh.New(bosh.Options{Address: e.sim.URL(), Username: sim.DefaultUsername, Password: sim.DefaultPassword})
	Expect(err).NotTo(HaveOccurred())
	e.mount = fmt.Sprintf("kv%d", mounts.Add(1))
	Expect(vaultServer.EnableKV(e.mount, 2)).To(Succeed())
	addr := vaultServer.Addr
	if o.proxy {
		e.proxy = newVaultProxy(vaultServer.Addr)
		addr = e.proxy.URL
	}
	e.store, err = vault.New(context.Background(), vault.Options{Address: addr, Token: vaultServer.Token, Mount: e.mount, Logger: testLogger()})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(e.store.Close)
	e.m = e.newManager()
	return e
}

// newManager creates a reconciler over the env's parts.
func (e *env) newManager() *reconciler.Manager {
	GinkgoHelper()
	return e.newManagerWith(nil)
}

// newManagerWith creates a reconciler over the env's parts, with the
// options change makes (may be nil).
func (e *env) newManagerWith(change func(*reconciler.Options)) *reconciler.Manager {
	GinkgoHelper()
	opts := reconciler.Options{
		Config: e.cfg, Directors: []ports.NamedDirector{{Director: e.bosh, Tasks: e.bosh}}, Store: e.store,
		Catalog: testCatalog, Registerer: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(io.MultiWriter(GinkgoWriter, e.logs), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if e.reg != nil && change == nil {
		opts.Registerer = e.reg
	}
	if e.clock != nil {
		opts.Now = e.clock.now
	}
	if change != nil {
		change(&opts)
	}
	m, err := reconciler.New(opts)
	Expect(err).NotTo(HaveOccurred())
	return m
}

func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// run makes one run and expects it to complete.
func (e *env) run(opts report.RunOptions) report.Summary {
	GinkgoHelper()
	s, err := e.m.RunOnce(context.Background(), opts)
	Expect(err).NotTo(HaveOccurred())
	return s
}

// index reads every index record.
func (e *env) index() map[string]*vault.Record {
	GinkgoHelper()
	idx, err := e.store.Index(context.Background())
	Expect(err).NotTo(HaveOccurred())
	Expect(idx.Problems).To(BeEmpty())
	return idx.Records
}

// manifest returns the simulator's manifest of a deployment.
func (e *env) manifest(name string) string {
	GinkgoHelper()
	text, err := e.bosh.Manifest(context.Background(), name)
	Expect(err).NotTo(HaveOccurred())
	return text
}

// vaultWrites is the store's write count so far.
func (e *env) vaultWrites() uint64 { return e.store.Stats().Writes }

// wipeIndex deletes every index document, as a lost Vault path would.
func (e *env) wipeIndex() {
	GinkgoHelper()
	code, body, err := vaultServer.Do("LIST", "/v1/"+e.mount+"/metadata/blacksmith/index/v1/shards", "")
	Expect(err).NotTo(HaveOccurred())
	Expect(code).To(Equal(http.StatusOK), string(body))
	var list struct {
		Data struct{ Keys []string } `json:"data"`
	}
	Expect(jsonUnmarshal(body, &list)).To(Succeed())
	Expect(list.Data.Keys).NotTo(BeEmpty())
	for _, k := range list.Data.Keys {
		code, body, err := vaultServer.Do(http.MethodDelete, "/v1/"+e.mount+"/metadata/blacksmith/index/v1/shards/"+k, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusNoContent), string(body))
	}
	Expect(e.index()).To(BeEmpty())
}

// instanceID is the instance id a seeded deployment's name ends with.
func instanceID(name string) string { return name[len(name)-36:] }

func sortedNames(names []string) []string {
	out := append([]string(nil), names...)
	slices.Sort(out)
	return out
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func sha256Hex(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// counter returns the value of a counter or gauge series of reg (labels nil: the unlabelled one).
func counter(reg *prometheus.Registry, name string, labels map[string]string) float64 {
	GinkgoHelper()
	mfs, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !sameLabels(m.GetLabel(), labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			}
		}
	}
	Fail("no series " + name + fmt.Sprint(labels))
	return 0
}

func sameLabels(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if want[l.GetName()] != l.GetValue() {
			return false
		}
	}
	return true
}

// changeState asks what bosh -d name start, stop, restart or recreate asks
// (PUT /deployments/:name/jobs/:path?state=, an empty text/yaml body), and
// waits for its task to end done.
func (e *env) changeState(name, jobs, state string) {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodPut, e.sim.URL()+"/deployments/"+name+"/jobs/"+jobs+"?state="+state, http.NoBody)
	Expect(err).NotTo(HaveOccurred())
	req.SetBasicAuth(sim.DefaultUsername, sim.DefaultPassword)
	req.Header.Set("Content-Type", "text/yaml")
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	Expect(err).NotTo(HaveOccurred())
	res.Body.Close()
	Expect(res.StatusCode).To(Equal(http.StatusFound))
	id, err := strconv.Atoi(path.Base(res.Header.Get("Location")))
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() string { t, _ := e.bosh.Task(context.Background(), id); return t.State }).WithTimeout(10 * time.Second).Should(Equal("done"))
}
