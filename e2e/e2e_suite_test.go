package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "End-to-end Suite")
}

// The suite's shared parts: the binaries, one Vault, one Director simulator.
var (
	blacksmithBin string
	simBin        string
	ccBin         string
	vaultServer   *testvault.Server
	directorURL   string
	store         *vault.Store
	catalogDir    string
)

const (
	brokerUser = "broker"
	brokerPass = "e2e-secret"
	// opUser and opPass are the operator's admin credentials (/b/*, the dashboard).
	opUser = "operator"
	opPass = "e2e-op-secret"
	// viewerUser and viewerPass only read them.
	viewerUser = "auditor"
	viewerPass = "e2e-view-secret"
	simUser    = "admin"
	simPass    = "admin"
)

var _ = BeforeSuite(func() {
	vaultServer = testvault.ForSuite(testvault.Options{})
	var err error
	var buildArgs []string
	if os.Getenv("E2E_RACE") == "true" { // the daemon with the race detector (exit 66 on a race)
		buildArgs = append(buildArgs, "-race")
	}
	blacksmithBin, err = gexec.Build("github.com/blacksmith-reconciler/blacksmith/cmd/blacksmith", buildArgs...)
	Expect(err).NotTo(HaveOccurred())
	simBin, err = gexec.Build("github.com/blacksmith-reconciler/blacksmith/cmd/bosh-director-sim")
	Expect(err).NotTo(HaveOccurred())
	ccBin, err = gexec.Build("github.com/blacksmith-reconciler/blacksmith/cmd/cc-sim")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(gexec.CleanupBuildArtifacts)

	catalogDir, err = filepath.Abs(filepath.Join("..", "manifests", "catalog"))
	Expect(err).NotTo(HaveOccurred())
	Expect(filepath.Join(catalogDir, "redis", "service.yml")).To(BeAnExistingFile())

	addr := freeAddr()
	sim, err := gexec.Start(exec.Command(simBin, "-listen", addr, "-task-duration", "500ms", "-agent-timeout", "100ms", "-seed", "3",
		"-user", simUser, "-password", simPass), GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { sim.Terminate().Wait(10 * time.Second) })
	directorURL = "http://" + addr
	Eventually(func() error { _, err := http.Get(directorURL + "/info"); return err }).
		WithTimeout(10 * time.Second).Should(Succeed())

	store, err = vault.New(context.Background(), vault.Options{Address: vaultServer.Addr, Token: vaultServer.Token, Mount: "secret"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(store.Close)
})

// freeAddr is a free 127.0.0.1 host:port.
func freeAddr() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}

// writeConfig writes a blacksmith.conf for a daemon listening on listen;
// extra YAML sections are appended (e.g. a metrics section).
func writeConfig(listen, vaultAddr, extra string) string {
	GinkgoHelper()
	text := fmt.Sprintf(`broker:
  listen: %s
  username: %s
  password: %s
operator:
  admin: {username: %s, password: %s}
  viewer: {username: %s, password: %s}
vault:
  address: %s
  token: %s
  mount: secret
bosh:
  address: %s
  username: %s
  password: %s
  timeout: 60s
catalog:
  dirs: [%s]
reconciler:
  interval: 1h
  retry_delay: 1s
  stop_timeout: 10s
%s`, listen, brokerUser, brokerPass, opUser, opPass, viewerUser, viewerPass, vaultAddr, vaultServer.Token, directorURL, simUser, simPass,
		strconv.Quote(catalogDir), extra)
	path := filepath.Join(GinkgoT().TempDir(), "blacksmith.conf")
	Expect(os.WriteFile(path, []byte(text), 0o600)).To(Succeed())
	return path
}

// daemon is a running blacksmith process.
type daemon struct {
	session *gexec.Session
	url     string
	config  string
}

// startDaemon starts blacksmith with a fresh configuration on a free port
// and waits until its broker answers.
func startDaemon(extra string) *daemon {
	GinkgoHelper()
	addr := freeAddr()
	d := &daemon{url: "http://" + addr, config: writeConfig(addr, vaultServer.Addr, extra)}
	DeferCleanup(d.stop)
	d.start()
	d.waitReady()
	return d
}

// start runs the binary with a clean environment, so that no VAULT_* or
// BOSH_* variable of the caller's shell changes the configuration. Whoever
// creates the daemon registers its stop.
func (d *daemon) start() {
	GinkgoHelper()
	cmd := exec.Command(blacksmithBin, "-c", d.config)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + GinkgoT().TempDir()}
	s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	d.session = s
}

// stop kills the daemon's current process if it still runs.
func (d *daemon) stop() {
	if s := d.session; s != nil && s.ExitCode() == -1 {
		s.Kill().Wait(10 * time.Second)
	}
}

// waitReady waits until the broker (behind its Vault connection) answers.
func (d *daemon) waitReady() {
	GinkgoHelper()
	Eventually(func() int {
		status, _ := d.get("/v2/catalog", brokerUser, brokerPass)
		return status
	}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(http.StatusOK))
}

// do sends a request with the given credentials ("" user: none) and the
// OSB API version header.
func (d *daemon) do(method, path, user, pass string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequest(method, d.url+path, strings.NewReader("{}"))
	Expect(err).NotTo(HaveOccurred())
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	req.Header.Set("X-Broker-API-Version", "2.14")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	return res.StatusCode, readAll(res)
}

// reconcile asks for a run and waits for it (POST /b/reconcile?wait=60s),
// retrying while the daemon cannot run yet (the broker opens when Vault
// answers, the reconciler once the Director does too); it returns the
// answer.
func (d *daemon) reconcile() string {
	GinkgoHelper()
	var body string
	Eventually(func() int {
		var code int
		code, body = d.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
		return code
	}).WithTimeout(60*time.Second).WithPolling(200*time.Millisecond).Should(Equal(http.StatusOK), func() string { return body })
	return body
}

func (d *daemon) get(path, user, pass string) (int, string) {
	return d.do(http.MethodGet, path, user, pass)
}

func readAll(res *http.Response) string {
	data, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

// decode unmarshals a JSON body.
func decode(body string) map[string]any {
	GinkgoHelper()
	var m map[string]any
	Expect(json.Unmarshal([]byte(body), &m)).To(Succeed(), body)
	return m
}

// simAdmin sends a request to the simulator's admin API.
func simAdmin(method, path string, body any) {
	GinkgoHelper()
	data, err := json.Marshal(body)
	Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequest(method, directorURL+path, strings.NewReader(string(data)))
	Expect(err).NotTo(HaveOccurred())
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	res.Body.Close()
	Expect(res.StatusCode).To(BeNumerically("<", 300), path)
}

// simDeployment puts a deployment with the given manifest on the simulator,
// behind the broker's back.
func simDeployment(manifest string) {
	GinkgoHelper()
	simPut(directorURL, manifest)
}

// simPut puts a deployment on the simulator at url, behind the broker's back.
func simPut(url, manifest string) {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodPut, url+"/_sim/deployments", strings.NewReader(manifest))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "text/yaml")
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	res.Body.Close()
	Expect(res.StatusCode).To(Equal(http.StatusNoContent))
}

// director sends an authenticated request to the simulator's Director API.
func director(path string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodGet, directorURL+path, nil)
	Expect(err).NotTo(HaveOccurred())
	req.SetBasicAuth(simUser, simPass)
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	return res.StatusCode, readAll(res)
}

// wipeIndex deletes every document of the broker's index from Vault, as a
// lost or corrupted index would leave it.
func wipeIndex() {
	GinkgoHelper()
	var walk func(prefix string) []string
	walk = func(prefix string) []string {
		code, body, err := vaultServer.Do("LIST", "/v1/secret/metadata/"+prefix, "")
		Expect(err).NotTo(HaveOccurred())
		if code == http.StatusNotFound {
			return nil
		}
		Expect(code).To(Equal(http.StatusOK), string(body))
		var list struct {
			Data struct{ Keys []string } `json:"data"`
		}
		Expect(json.Unmarshal(body, &list)).To(Succeed())
		var out []string
		for _, k := range list.Data.Keys {
			if strings.HasSuffix(k, "/") {
				out = append(out, walk(prefix+k)...)
				continue
			}
			out = append(out, prefix+k)
		}
		return out
	}
	docs := walk("blacksmith/index/")
	Expect(docs).NotTo(BeEmpty())
	for _, p := range docs {
		code, body, err := vaultServer.Do(http.MethodDelete, "/v1/secret/metadata/"+p, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusNoContent), string(body))
	}
}
