package e2e_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// simProcess is a Director simulator of a spec's own.
type simProcess struct {
	session *gexec.Session
	url     string
}

// startSim starts a simulator with args (admin/admin) and waits until it answers.
func startSim(args ...string) *simProcess {
	GinkgoHelper()
	addr := freeAddr()
	s, err := gexec.Start(exec.Command(simBin, append([]string{"-listen", addr, "-user", simUser, "-password", simPass}, args...)...),
		GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { s.Terminate().Wait(10 * time.Second) })
	p := &simProcess{session: s, url: "http://" + addr}
	Eventually(func() error { _, err := http.Get(p.url + "/info"); return err }).WithTimeout(10 * time.Second).Should(Succeed())
	return p
}

// listings is how often the simulator was asked for its deployments since its last reset.
func (p *simProcess) listings() int { return simListings(p.url) }

// haWorld is a Vault mount of its own and the bosh section of the daemons
// that share it, so that no other spec's records or deployments count.
type haWorld struct {
	bosh    string // the bosh section's YAML, indented under "bosh:"
	mount   string
	store   *vault.Store
	catalog string
}

// boshSection is the bosh section for the Directors at urls: one mapping,
// or, with names, a list of named Directors.
func boshSection(urls []string, names ...string) string {
	if len(names) == 0 {
		return fmt.Sprintf("  address: %s\n  username: %s\n  password: %s\n", urls[0], simUser, simPass)
	}
	var b strings.Builder
	for i, u := range urls {
		fmt.Fprintf(&b, "  - name: %s\n    address: %s\n    username: %s\n    password: %s\n", names[i], u, simUser, simPass)
	}
	return b.String()
}

// newHAWorld enables a fresh KV v2 mount for daemons whose bosh section is bosh.
func newHAWorld(bosh string) *haWorld {
	GinkgoHelper()
	w := &haWorld{bosh: bosh, mount: fmt.Sprintf("ha%d", time.Now().UnixNano()), catalog: catalogDir}
	Expect(vaultServer.EnableKV(w.mount, 2)).To(Succeed())
	var err error
	w.store, err = vault.New(context.Background(), vault.Options{Address: vaultServer.Addr, Token: vaultServer.Token, Mount: w.mount})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.store.Close)
	return w
}

// start starts a daemon with ha (lease_ttl 3s) on the world's Directors and
// mount; reconciler is the reconciler section's lines.
func (w *haWorld) start(reconciler string) *daemon {
	GinkgoHelper()
	addr := freeAddr()
	text := fmt.Sprintf(`broker:
  listen: %s
  username: %s
  password: %s
operator:
  admin: {username: %s, password: %s}
vault:
  address: %s
  token: %s
  mount: %s
bosh:
%scatalog:
  dirs: [%s]
ha:
  enabled: true
  lease_ttl: 3s
reconciler:
%s`, addr, brokerUser, brokerPass, opUser, opPass, vaultServer.Addr, vaultServer.Token, w.mount, w.bosh, strconv.Quote(w.catalog), reconciler)
	path := filepath.Join(GinkgoT().TempDir(), "blacksmith.conf")
	Expect(os.WriteFile(path, []byte(text), 0o600)).To(Succeed())
	d := &daemon{url: "http://" + addr, config: path}
	DeferCleanup(d.stop)
	d.start()
	d.waitReady()
	return d
}

// limitedCatalog is a copy of the sample catalog whose redis-small plan allows limit instances.
func limitedCatalog(limit int) string {
	GinkgoHelper()
	return catalogWith(func(plan string) string {
		Expect(plan).To(ContainSubstring("limit: 0\n"))
		return strings.Replace(plan, "limit: 0\n", fmt.Sprintf("limit: %d\n", limit), 1)
	})
}

// catalogWith is a copy of the sample catalog whose redis-small plan.yml is
// edit's answer to its text.
func catalogWith(edit func(plan string) string) string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	Expect(os.CopyFS(dir, os.DirFS(catalogDir))).To(Succeed())
	plan := filepath.Join(dir, "redis", "small", "plan.yml")
	text, err := os.ReadFile(plan)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(plan, []byte(edit(string(text))), fs.FileMode(0o644))).To(Succeed())
	return dir
}

var _ = Describe("several broker VMs on one Vault: limits and a leader killed mid-run", func() {
	It("give exactly 2 instances for 8 concurrent provisions of a plan limited to 2, spread over 3 daemons", func() {
		sim := startSim("-task-duration", "200ms")
		w := newHAWorld(boshSection([]string{sim.url}))
		w.catalog = limitedCatalog(2)
		var ds []*daemon
		for range 3 {
			ds = append(ds, w.start("  interval: 1h\n"))
		}
		codes := make([]int, 8)
		bodies := make([]string, 8)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 8 {
			wg.Go(func() {
				defer GinkgoRecover()
				<-start
				body := `{"service_id": "redis", "plan_id": "redis-small", "organization_guid": "org", "space_guid": "space"}`
				codes[i], bodies[i], _ = ds[i%3].send(http.MethodPut, fmt.Sprintf("/v2/service_instances/e2e-limit-%d?accepts_incomplete=true", i),
					strings.NewReader(body), int64(len(body)))
			})
		}
		close(start)
		wg.Wait()
		accepted, refused := 0, 0
		for i, c := range codes {
			switch c {
			case http.StatusAccepted:
				accepted++
			case http.StatusUnprocessableEntity:
				Expect(bodies[i]).To(ContainSubstring("QuotaExceeded"), bodies[i])
				refused++
			default:
				Fail(fmt.Sprintf("provision %d: %d %s", i, c, bodies[i]))
			}
		}
		Expect(accepted).To(Equal(2), "the limit holds across the daemons")
		Expect(refused).To(Equal(6))
		idx, err := w.store.Index(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(idx.Records).To(HaveLen(2), "two records, no more")
	})

	It("hand a run cut short by kill -9 of the leader to another daemon, which finishes it: no record lost or duplicated", func() {
		const seeded = 300
		sim := startSim("-seed", strconv.Itoa(seeded), "-latency", "20ms")
		w := newHAWorld(boshSection([]string{sim.url}))
		var ds []*daemon
		for range 3 {
			ds = append(ds, w.start("  interval: 5s\n  max_concurrency: 2\n  retry_delay: 200ms\n  stop_timeout: 10s\n"))
		}
		Eventually(func() int { return len(leaders(ds)) }).WithTimeout(20 * time.Second).Should(Equal(1))
		first := leaders(ds)[0]
		// Kill it while its first run (300 x 2 requests at 20 ms, 2 at a time: ~6 s) is part-way:
		// some instances have their documents (written one by one; the index goes in batches).
		documented := func() int {
			ids, err := w.store.Documents.Instances(context.Background())
			if err != nil {
				return 0
			}
			return len(ids)
		}
		Eventually(documented).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(BeNumerically(">=", 20))
		Expect(documented()).To(BeNumerically("<", seeded), "killed mid-run")
		killed := time.Now()
		first.session.Kill().Wait(10 * time.Second)
		rest := without(ds, first)

		Eventually(func() int { return len(leaders(rest)) }).WithTimeout(3*time.Second+5*time.Second).
			WithPolling(100*time.Millisecond).Should(Equal(1), "another daemon leads within lease_ttl + one interval")
		GinkgoWriter.Printf("new leader after %s\n", time.Since(killed))
		Eventually(func() int {
			idx, err := w.store.Index(context.Background())
			if err != nil {
				return 0
			}
			return len(idx.Records)
		}).WithTimeout(60*time.Second).WithPolling(200*time.Millisecond).Should(Equal(seeded), "the new leader finishes the work")

		idx, err := w.store.Index(context.Background())
		Expect(err).NotTo(HaveOccurred())
		deployments := map[string]string{}
		for id, rec := range idx.Records {
			Expect(rec.Orphaned).To(BeFalse(), id)
			Expect(rec.Fingerprint).NotTo(BeEmpty(), id)
			name := rec.Deployment(id)
			Expect(deployments).NotTo(HaveKey(name), "one record per deployment")
			deployments[name] = id
			Expect(strings.HasSuffix(name, id)).To(BeTrue(), "%s names %s", id, name)
		}
		ids, err := w.store.Documents.Instances(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(ids).To(HaveLen(seeded), "metadata and manifest of every instance, none extra")
	})
})

// reset zeroes the simulator's counters.
func (p *simProcess) reset() {
	GinkgoHelper()
	res, err := http.Post(p.url+"/_sim/reset", "application/json", nil)
	Expect(err).NotTo(HaveOccurred())
	res.Body.Close()
}
