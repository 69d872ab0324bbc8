package manifests_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
)

var _ = Describe("bin/pre-start", func() {
	BeforeEach(func() { rubyPath() })

	It("copies each catalog folder, links followed, to where bpm mounts it, replacing an earlier copy", func() {
		props := requiredProps()
		props["catalog"] = map[string]any{"dirs": []any{"/var/vcap/jobs/forge-a/catalog", "/var/vcap/jobs/forge-b/catalog"}}
		vm := newFakeVM(props)
		stale := vm.path("/var/vcap/data/blacksmith/catalog/0/gone")
		Expect(os.MkdirAll(stale, 0o755)).To(Succeed())

		vm.deploy()
		for i, service := range []string{"postgresql", "redis"} {
			copied := vm.path(filepath.Join("/var/vcap/data/blacksmith/catalog", strconv.Itoa(i), service))
			info, err := os.Lstat(filepath.Join(copied, "service.yml"))
			Expect(err).NotTo(HaveOccurred())
			Expect(info.Mode().IsRegular()).To(BeTrue(), "%s is a real file", copied)
			Expect(os.Lstat(copied)).To(WithTransform(os.FileInfo.IsDir, BeTrue()))
		}
		Expect(stale).NotTo(BeADirectory())
		Expect(vm.path("/var/vcap/data/blacksmith")).To(WithTransform(func(dir string) []string {
			names, _ := filepath.Glob(filepath.Join(dir, "catalog.*"))
			return names
		}, BeEmpty()), "no staging folder is left behind")
	})

	It("fails, naming the folder, when a catalog folder is not on the VM", func() {
		props := requiredProps()
		props["catalog"] = map[string]any{"dirs": []any{"/var/vcap/jobs/forge/catalog"}}
		vm := newFakeVM(props)
		Expect(os.RemoveAll(vm.path("/var/vcap/jobs/forge"))).To(Succeed())
		session := vm.run("bin/pre-start")
		Expect(session.ExitCode()).NotTo(Equal(0))
		Expect(session.Err).To(gbytes.Say(`catalog.dirs\[0\] is .*/var/vcap/jobs/forge/catalog, which is not a folder`))
	})
})

// reconcileStatus answers GET /b/reconcile as the broker does (JSON indented
// by two spaces), with the given basic-auth credentials; the first busy
// answers say a run is in progress. polls counts the answers.
func reconcileStatus(user, pass string, busy int32, polls *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if r.Method != http.MethodGet || r.URL.Path != "/b/reconcile" || !ok || u != user || p != pass {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		n := polls.Add(1)
		body, _ := json.MarshalIndent(reconciler.Status{Enabled: true, Running: busy < 0 || n <= busy, Phase: "update"}, "", "  ")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(body, '\n'))
	})
}

var _ = Describe("bin/drain", func() {
	const user, pass = "operator", "p\"a\\s s:w$rd'\nline two"
	var polls atomic.Int32

	BeforeEach(func() {
		rubyPath()
		polls.Store(0)
	})

	// drain renders the job for a broker listening on listen and runs its
	// drain script as BOSH does before a stop.
	drain := func(listen, stopTimeout string, tls bool, viewer ...string) (*gexec.Session, time.Duration) {
		GinkgoHelper()
		props := requiredProps()
		props["broker"] = map[string]any{"username": "broker", "password": "broker-secret", "listen": listen,
			"tls": map[string]any{"enabled": tls}}
		props["operator"] = map[string]any{"admin": map[string]any{"username": user, "password": pass}}
		if len(viewer) == 2 {
			props["operator"].(map[string]any)["viewer"] = map[string]any{"username": viewer[0], "password": viewer[1]}
		}
		props["reconciler"] = map[string]any{"stop_timeout": stopTimeout}
		dir := GinkgoT().TempDir()
		Expect(renderJob(props, dir)).To(Succeed())
		cmd := exec.Command("bash", filepath.Join(dir, "bin/drain"), "job_shutdown", "hash_unchanged")
		cmd.Env = cleanEnv()
		start := time.Now()
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session).WithTimeout(30 * time.Second).Should(gexec.Exit(0))
		Expect(string(session.Out.Contents())).To(Equal("0\n"), "stdout holds the integer BOSH reads, alone")
		return session, time.Since(start)
	}

	It("waits while a reconciler run is in progress, then prints 0", func() {
		server := httptest.NewServer(reconcileStatus(user, pass, 2, &polls))
		DeferCleanup(server.Close)
		_, port, _ := net.SplitHostPort(server.Listener.Addr().String())
		session, took := drain("0.0.0.0:"+port, "30s", false)
		Expect(polls.Load()).To(BeEquivalentTo(3))
		Expect(took).To(BeNumerically(">=", 2*time.Second))
		Expect(session.Err).To(gbytes.Say("a reconciler run is in progress"))
	})

	It("stops waiting after reconciler.stop_timeout", func() {
		server := httptest.NewServer(reconcileStatus(user, pass, -1, &polls))
		DeferCleanup(server.Close)
		session, took := drain(server.Listener.Addr().String(), "2s", false)
		Expect(took).To(And(BeNumerically(">=", time.Second), BeNumerically("<", 10*time.Second)))
		Expect(polls.Load()).To(BeNumerically(">=", 1))
		Expect(session.Err).To(gbytes.Say(`still in progress after 2 s`))
	})

	It("reads with the viewer's credentials when there is a viewer", func() {
		server := httptest.NewServer(reconcileStatus("auditor", "view-pw", 1, &polls))
		DeferCleanup(server.Close)
		drain(server.Listener.Addr().String(), "30s", false, "auditor", "view-pw")
		Expect(polls.Load()).To(BeEquivalentTo(2), "answered only to the viewer's credentials")
	})

	It("asks a broker that serves HTTPS over HTTPS", func() {
		server := httptest.NewTLSServer(reconcileStatus(user, pass, 1, &polls))
		DeferCleanup(server.Close)
		drain(server.Listener.Addr().String(), "30s", true)
		Expect(polls.Load()).To(BeEquivalentTo(2))
	})

	It("is not rendered for a reconciler.stop_timeout that is not a Go duration", func() {
		props := requiredProps()
		props["reconciler"] = map[string]any{"stop_timeout": 30}
		Expect(renderJob(props, GinkgoT().TempDir())).To(MatchError(And(
			ContainSubstring(`Error filling in template 'drain.erb' (line `),
			ContainSubstring(`reconciler.stop_timeout: "30" is not a Go duration`))))
	})

	It("does not wait when nothing answers", func() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		addr := l.Addr().String()
		Expect(l.Close()).To(Succeed())
		session, took := drain(addr, "30s", false)
		Expect(took).To(BeNumerically("<", 10*time.Second))
		Expect(session.Err).To(gbytes.Say("nothing to wait for"))
	})
})
