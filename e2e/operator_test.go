package e2e_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("The operator's endpoints", Ordered, func() {
	var d *daemon

	BeforeAll(func() { d = startDaemon("") })

	It("answers 401 to wrong credentials everywhere but /metrics and /healthz", func() {
		routes := [][2]string{
			{"GET", "/v2/catalog"},
			{"PUT", "/v2/service_instances/x?accepts_incomplete=true"},
			{"PATCH", "/v2/service_instances/x?accepts_incomplete=true"},
			{"DELETE", "/v2/service_instances/x?accepts_incomplete=true&service_id=redis&plan_id=redis-small"},
			{"GET", "/v2/service_instances/x"},
			{"GET", "/v2/service_instances/x/last_operation"},
			{"PUT", "/v2/service_instances/x/service_bindings/y"},
			{"DELETE", "/v2/service_instances/x/service_bindings/y?service_id=redis&plan_id=redis-small"},
			{"GET", "/v2/service_instances/x/service_bindings/y"},
			{"GET", "/b/reconcile"},
			{"POST", "/b/reconcile"},
		}
		for _, r := range routes {
			code, _ := d.do(r[0], r[1], brokerUser, "wrong")
			Expect(code).To(Equal(http.StatusUnauthorized), "%s %s", r[0], r[1])
			code, _ = d.do(r[0], r[1], "", "")
			Expect(code).To(Equal(http.StatusUnauthorized), "%s %s without credentials", r[0], r[1])
		}
		for _, path := range []string{"/metrics", "/healthz"} {
			code, body := d.get(path, brokerUser, "wrong")
			Expect(code).To(Equal(http.StatusOK), body)
		}
	})

	It("takes the operator's credentials apart from the broker's: the platform's get 401 on /b/* and the dashboard, a viewer only reads", func() {
		operatorRoutes := [][2]string{
			{"GET", "/b/reconcile"}, {"POST", "/b/reconcile?dry_run=true"}, {"GET", "/b/runs"}, {"GET", "/b/instances"},
			{"GET", "/b/instances/x"}, {"POST", "/b/instances/x/restore"}, {"POST", "/b/instances/x/adopt"},
			{"GET", "/b/upgrades"}, {"POST", "/b/upgrades?dry_run=true"}, {"GET", "/dashboard"}, {"GET", "/dashboard/"},
		}
		for _, r := range operatorRoutes {
			code, body := d.do(r[0], r[1], brokerUser, brokerPass)
			Expect(code).To(Equal(http.StatusUnauthorized), "the broker's credentials on %s %s: %s", r[0], r[1], body)
			code, body = d.do(r[0], r[1], opUser, opPass)
			Expect(code).NotTo(BeElementOf(http.StatusUnauthorized, http.StatusForbidden), "the admin on %s %s: %s", r[0], r[1], body)
			code, body = d.do(r[0], r[1], viewerUser, viewerPass)
			if r[0] == "GET" {
				Expect(code).NotTo(BeElementOf(http.StatusUnauthorized, http.StatusForbidden), "the viewer on %s %s: %s", r[0], r[1], body)
			} else {
				Expect(code).To(Equal(http.StatusForbidden), "the viewer on %s %s: %s", r[0], r[1], body)
				Expect(decode(body)["description"]).To(ContainSubstring("only read"))
			}
		}
		for _, creds := range [][2]string{{opUser, opPass}, {viewerUser, viewerPass}} {
			code, body := d.get("/v2/catalog", creds[0], creds[1])
			Expect(code).To(Equal(http.StatusUnauthorized), "the operator's credentials on the OSB API: %s", body)
		}
		_, body := d.get("/healthz", brokerUser, brokerPass)
		Expect(decode(body)["checks"]).To(HaveKeyWithValue("vault", "ok"))
	})

	It("answers 412 without the API version header", func() {
		req, _ := http.NewRequest(http.MethodGet, d.url+"/v2/catalog", nil)
		req.SetBasicAuth(brokerUser, brokerPass)
		res, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusPreconditionFailed))
	})

	It("tells the truth on /healthz", func() {
		code, body := d.get("/healthz", "", "")
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(decode(body)).To(HaveKeyWithValue("checks", And(HaveKeyWithValue("vault", "ok"), HaveKeyWithValue("director", "ok"))))
	})

	It("serves GET /b/reconcile, a dry run's plan, and 504 when ?wait ends first", func() {
		code, body := d.get("/b/reconcile", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(decode(body)).To(HaveKey("phase"))

		code, body = d.do(http.MethodPost, "/b/reconcile?dry_run=true&wait=60s", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(decode(body)["summary"]).To(HaveKeyWithValue("dry_run", true))

		code, body = d.do(http.MethodPost, "/b/reconcile", opUser, opPass)
		Expect(code).To(Equal(http.StatusAccepted), body)
		Expect(decode(body)["run_id"]).NotTo(BeEmpty())

		simAdmin(http.MethodPost, "/_sim/config", map[string]any{"latency_ms": 1500})
		DeferCleanup(func() { simAdmin(http.MethodPost, "/_sim/config", map[string]any{"latency_ms": 0}) })
		code, body = d.do(http.MethodPost, "/b/reconcile?wait=200ms", opUser, opPass)
		Expect(code).To(Equal(http.StatusGatewayTimeout), body)
		Expect(decode(body)["error"]).To(ContainSubstring("GET /b/reconcile"))

		code, _ = d.do(http.MethodPost, "/b/reconcile?wait=soon", opUser, opPass)
		Expect(code).To(Equal(http.StatusBadRequest))
	})

	It("counts /b/reconcile in the broker's request metrics, as operations reconcile and reconcile_status", func() {
		want := map[string]float64{
			`blacksmith_broker_requests_total{code="200",operation="reconcile_status"}`:      1,
			`blacksmith_broker_requests_total{code="202",operation="reconcile"}`:             1,
			`blacksmith_broker_requests_total{code="400",operation="reconcile"}`:             1,
			`blacksmith_broker_requests_total{code="401",operation="reconcile"}`:             1,
			`blacksmith_broker_request_duration_seconds_count{operation="reconcile"}`:        3,
			`blacksmith_broker_request_duration_seconds_count{operation="reconcile_status"}`: 1,
		}
		// scrape reads the value of each series of want (0 when absent).
		scrape := func() map[string]float64 {
			GinkgoHelper()
			code, body := d.get("/metrics", "", "")
			Expect(code).To(Equal(http.StatusOK))
			got := map[string]float64{}
			for _, line := range strings.Split(body, "\n") {
				series, value, _ := strings.Cut(line, " ")
				if _, ok := want[series]; ok {
					f, err := strconv.ParseFloat(value, 64)
					Expect(err).NotTo(HaveOccurred(), line)
					got[series] = f
				}
			}
			return got
		}
		before := scrape()
		code, _ := d.get("/b/reconcile", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK))
		code, _ = d.do(http.MethodPost, "/b/reconcile", opUser, opPass)
		Expect(code).To(Equal(http.StatusAccepted))
		code, _ = d.do(http.MethodPost, "/b/reconcile?wait=soon", opUser, opPass)
		Expect(code).To(Equal(http.StatusBadRequest))
		code, _ = d.do(http.MethodPost, "/b/reconcile", brokerUser, "wrong")
		Expect(code).To(Equal(http.StatusUnauthorized))
		after := scrape()
		for series, n := range want {
			Expect(after[series]-before[series]).To(Equal(n), series)
		}
	})

	It("serves /metrics that Prometheus's promtool accepts", func() {
		promtool, err := exec.LookPath("promtool")
		if err != nil {
			if os.Getenv("CI") == "true" {
				Fail("promtool is required under CI=true (Debian package prometheus)")
			}
			Skip("promtool not installed (apt-get install prometheus)")
		}
		code, body := d.get("/metrics", "", "")
		Expect(code).To(Equal(http.StatusOK))
		for _, name := range []string{"blacksmith_broker_requests_total", "blacksmith_bosh_requests_total",
			"go_goroutines", "process_resident_memory_bytes"} {
			Expect(body).To(ContainSubstring(name))
		}
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		Expect(cmd.Run()).To(Succeed(), out.String())
	})

	It("exposes only blacksmith metrics that the metrics table (docs/monitoring.md) documents", func() {
		readme, err := os.ReadFile("../docs/monitoring.md")
		Expect(err).NotTo(HaveOccurred())
		code, body := d.get("/metrics", "", "")
		Expect(code).To(Equal(http.StatusOK))
		seen := 0
		for _, line := range strings.Split(body, "\n") {
			name, ok := strings.CutPrefix(line, "# TYPE ")
			if !ok || !strings.HasPrefix(name, "blacksmith_") {
				continue
			}
			name = strings.Fields(name)[0]
			seen++
			Expect(string(readme)).To(ContainSubstring("| `"+name+"` |"), "docs/monitoring.md's metrics table lacks %s", name)
		}
		Expect(seen).To(BeNumerically(">=", 15))
	})

	It("shows on GET /b/reconcile the last run, its metrics, the orphans and the deployments no plan matches", func() {
		simDeployment("name: e2e-foreign-1\nreleases: [{name: concourse, version: '7'}]\n")
		DeferCleanup(func() { simAdmin(http.MethodDelete, "/_sim/deployments/e2e-foreign-1", nil) })
		_, err := store.Update(context.Background(), map[string]vault.Change{"e2e-orphan-1": func(*vault.Record) (*vault.Record, error) {
			return &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-e2e-orphan-1",
				Created: time.Now().Add(-24 * time.Hour).Unix()}, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(store.Indexes.Remove(context.Background(), "e2e-orphan-1")).To(Succeed()) })

		code, body := d.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
		runID := decode(body)["run_id"]
		code, body = d.get("/b/reconcile", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
		st := decode(body)
		Expect(st).To(HaveKeyWithValue("running", false))
		Expect(st).To(HaveKeyWithValue("last_run", HaveKeyWithValue("run_id", runID)))
		Expect(st).To(HaveKeyWithValue("metrics", Not(BeEmpty())))
		Expect(st["unmatched"]).To(ContainElement(And(HaveKeyWithValue("deployment", "e2e-foreign-1"),
			HaveKeyWithValue("reason", ContainSubstring("no properties.blacksmith")))))
		Expect(st["orphans"]).To(ContainElement(HaveKeyWithValue("instance_id", "e2e-orphan-1")))
	})

	It("stops on SIGTERM with exit code 0, letting the run in progress finish", func() {
		simAdmin(http.MethodPost, "/_sim/config", map[string]any{"latency_ms": 300})
		DeferCleanup(func() { simAdmin(http.MethodPost, "/_sim/config", map[string]any{"latency_ms": 0}) })
		code, body := d.do(http.MethodPost, "/b/reconcile", opUser, opPass)
		Expect(code).To(Equal(http.StatusAccepted), body)
		Eventually(func() any {
			_, body := d.get("/b/reconcile", opUser, opPass)
			return decode(body)["running"]
		}).WithTimeout(10 * time.Second).WithPolling(20 * time.Millisecond).Should(BeTrue())

		d.session.Terminate()
		Eventually(func() string { return string(d.session.Err.Contents()) }).
			WithTimeout(10 * time.Second).Should(ContainSubstring("stopping: no new requests"))
		code, body = d.get("/healthz", "", "")
		Expect(code).To(BeZero(), "no request is taken once stopping: %s", body)
		Eventually(d.session).WithTimeout(45 * time.Second).Should(gexec.Exit(0))
		log := string(d.session.Err.Contents())
		Expect(log).To(ContainSubstring("stopping: no new requests"))
		Expect(log).To(ContainSubstring("waiting for the run in progress"))
		Expect(log).To(ContainSubstring("blacksmith stopped"))
	})
})

var _ = Describe("Starting without Vault", func() {
	It("keeps serving /healthz (503, naming Vault, its error only to the operator's credentials), answers the broker with 503, and stops cleanly", func() {
		addr := freeAddr()
		d := &daemon{url: "http://" + addr, config: writeConfig(addr, "http://127.0.0.2:1", "")}
		DeferCleanup(d.stop)
		d.start()
		Eventually(func() int { code, _ := d.get("/healthz", "", ""); return code }).
			WithTimeout(10 * time.Second).Should(Equal(http.StatusServiceUnavailable))
		_, body := d.get("/healthz", "", "")
		Expect(decode(body)["checks"]).To(HaveKeyWithValue("vault", "unavailable"))
		Expect(body).NotTo(ContainSubstring("127.0.0.2"), "no internal address to an unauthenticated caller")
		Eventually(func() map[string]any { // the checks are cached 2 s: the first may be from before the first attempt failed
			_, body := d.get("/healthz", opUser, opPass)
			checks, _ := decode(body)["checks"].(map[string]any)
			return checks
		}).WithTimeout(10 * time.Second).Should(HaveKeyWithValue("vault", And(ContainSubstring("not connected yet"), ContainSubstring("127.0.0.2:1"))))
		code, _ := d.get("/v2/catalog", brokerUser, brokerPass)
		Expect(code).To(Equal(http.StatusServiceUnavailable))
		code, _ = d.get("/v2/catalog", brokerUser, "wrong")
		Expect(code).To(Equal(http.StatusUnauthorized))
		Expect(d.session.ExitCode()).To(Equal(-1), "still running")
		d.session.Terminate()
		Eventually(d.session).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
	})
})

var _ = Describe("Starting without the Director", func() {
	It("opens the broker, says so on /healthz, and retries until the Director answers", func() {
		addr := freeAddr()
		cfg := writeConfig(addr, vaultServer.Addr, "")
		text, err := os.ReadFile(cfg)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(cfg, []byte(strings.Replace(string(text), directorURL, "http://127.0.0.2:1", 1)), 0o600)).To(Succeed())
		d := &daemon{url: "http://" + addr, config: cfg}
		DeferCleanup(d.stop)
		d.start()
		d.waitReady()
		code, body := d.get("/healthz", "", "")
		Expect(code).To(Equal(http.StatusServiceUnavailable))
		Expect(decode(body)["checks"]).To(And(HaveKeyWithValue("vault", "ok"), HaveKeyWithValue("director", Not(Equal("ok")))))
		code, body = d.do(http.MethodPost, "/b/reconcile", opUser, opPass)
		Expect(code).To(Equal(http.StatusServiceUnavailable), body)
		Eventually(func() string { return string(d.session.Err.Contents()) }).
			Should(MatchRegexp(`cannot connect yet; retrying.*to="bosh director" attempt=2`))
		d.session.Terminate()
		Eventually(d.session).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
	})
})

var _ = Describe("A catalog with a bad file", func() {
	It("stops the daemon at start with exit code 1, naming the file and the field", func() {
		addr := freeAddr()
		d := &daemon{url: "http://" + addr, config: badCatalogConfig(addr)}
		DeferCleanup(d.stop)
		d.start()
		Eventually(d.session).WithTimeout(20 * time.Second).Should(gexec.Exit(1))
		Expect(string(d.session.Err.Contents())).To(ContainSubstring("svc/service.yml: id: required"))
	})
})

// badCatalogConfig writes a catalog whose service.yml has no id and a
// configuration that uses it.
func badCatalogConfig(addr string) string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	Expect(os.MkdirAll(dir+"/svc/plan", 0o755)).To(Succeed())
	Expect(os.WriteFile(dir+"/svc/service.yml", []byte("name: svc\ndescription: no id\n"), 0o644)).To(Succeed())
	Expect(os.WriteFile(dir+"/svc/plan/plan.yml", []byte("id: p\nname: p\ndescription: p\n"), 0o644)).To(Succeed())
	Expect(os.WriteFile(dir+"/svc/plan/manifest.yml", []byte("name: x\n"), 0o644)).To(Succeed())
	cfg := writeConfig(addr, vaultServer.Addr, "")
	text, err := os.ReadFile(cfg)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(cfg, []byte(strings.Replace(string(text), catalogDir, dir, 1)), 0o600)).To(Succeed())
	return cfg
}

var _ = Describe("The subcommands", func() {
	run := func(args ...string) *gexec.Session {
		cmd := exec.Command(blacksmithBin, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		return s
	}

	It("checks a configuration, redacting secrets", func() {
		cfg := writeConfig(freeAddr(), vaultServer.Addr, "")
		s := run("check-config", "-c", cfg)
		Eventually(s).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
		Expect(string(s.Out.Contents())).NotTo(ContainSubstring(brokerPass))
		Expect(string(s.Out.Contents())).To(ContainSubstring("<redacted>"))

		bad := writeConfig(freeAddr(), vaultServer.Addr, "nonsense: true\n")
		s = run("check-config", "-c", bad)
		Eventually(s).WithTimeout(20 * time.Second).Should(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(ContainSubstring("nonsense"))
	})

	It("checks the catalog the configuration names, naming the file and the field", func() {
		s := run("check-config", "-c", badCatalogConfig(freeAddr()))
		Eventually(s).WithTimeout(20 * time.Second).Should(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(ContainSubstring("svc/service.yml: id: required"))
		Expect(string(s.Out.Contents())).To(BeEmpty(), "no configuration is printed as if it were good")
	})

	It("prints a dry run's plan as JSON", func() {
		s := run("reconcile", "--dry-run", "-c", writeConfig(freeAddr(), vaultServer.Addr, ""))
		Eventually(s).WithTimeout(60 * time.Second).Should(gexec.Exit(0))
		Expect(decode(string(s.Out.Contents()))).To(HaveKeyWithValue("dry_run", true))
	})

	It("lists an instance's backups and restores the newest, backing up the current state first", func() {
		ctx := context.Background()
		const id = "e2e-restore-1"
		_, err := store.Update(ctx, map[string]vault.Change{id: func(*vault.Record) (*vault.Record, error) {
			return &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-" + id}, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(store.PutManifest(ctx, id, "name: before\n")).To(Succeed())
		taken, err := store.Backup(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(store.PutManifest(ctx, id, "name: after\n")).To(Succeed())
		cfg := writeConfig(freeAddr(), vaultServer.Addr, "")

		s := run("backups", "-c", cfg, id)
		Eventually(s).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
		Expect(strings.Fields(string(s.Out.Contents()))).To(Equal([]string{taken}))

		s = run("restore", "-c", cfg, id)
		Eventually(s).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
		Expect(string(s.Out.Contents())).To(ContainSubstring("from backup " + taken))
		text, _, err := store.Manifest(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(Equal("name: before\n"))
		all, err := store.Backups(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(all).To(HaveLen(2), "the state before the restore was backed up")

		s = run("restore", "-c", cfg, id, "not-a-backup")
		Eventually(s).WithTimeout(20 * time.Second).Should(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(ContainSubstring("not-a-backup"))
		s = run("restore", "-c", cfg)
		Eventually(s).WithTimeout(20 * time.Second).Should(gexec.Exit(2))
	})

	It("prints its version and refuses unknown commands with exit code 2", func() {
		s := run("version")
		Eventually(s).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
		Expect(string(s.Out.Contents())).To(HavePrefix("blacksmith "))
		s = run("frobnicate")
		Eventually(s).WithTimeout(20 * time.Second).Should(gexec.Exit(2))
	})
})
