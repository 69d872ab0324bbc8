package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

// make run's script, with the binaries this suite built: the README's first
// command must come up with its sample state and stop everything it started.
var _ = Describe("make run (ci/run-local.sh)", func() {
	ports := []string{"127.0.0.1:8200", "127.0.0.1:25555", "127.0.0.1:9022", "127.0.0.1:3000"}

	It("comes up with the sample state, answers, and stops all it started on SIGTERM", func() {
		for _, p := range ports {
			if listening(p) {
				if os.Getenv("CI") == "true" {
					Fail(p + " is in use: make run's ports must be free under CI")
				}
				Skip(p + " is in use (a make run of yours?)")
			}
		}
		vaultBin := os.Getenv("VAULT_BIN")
		if vaultBin == "" {
			vaultBin = "vault"
		}
		cmd := exec.Command("bash", "ci/run-local.sh")
		cmd.Dir = filepath.Dir(filepath.Dir(catalogDir)) // the repository root
		cmd.Env = append(os.Environ(), "VAULT_BIN="+vaultBin, "BLACKSMITH_BIN="+blacksmithBin, "DIRECTOR_SIM_BIN="+simBin, "CC_SIM_BIN="+ccBin)
		s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		// SIGTERM first: the script stops what it started on it (a kill would leave them holding the ports).
		DeferCleanup(func() { s.Terminate().Wait(30 * time.Second); s.Kill().Wait(10 * time.Second) })

		d := &daemon{url: "http://127.0.0.1:3000"}
		Eventually(func() map[string]any {
			code, body := d.do("GET", "/b/reconcile", "operator", "operator")
			if code != 200 {
				return nil
			}
			return decode(body)
		}).WithTimeout(90*time.Second).WithPolling(500*time.Millisecond).Should(And(
			HaveKeyWithValue("orphans", HaveLen(1)),
			HaveKeyWithValue("unmatched", ConsistOf(HaveKeyWithValue("deployment", "concourse"))),
			HaveKeyWithValue("last_run", HaveKeyWithValue("matched", BeNumerically("==", 4))),
			HaveKeyWithValue("platform", HaveKeyWithValue("orphan_deployments", ConsistOf(HaveKeyWithValue("deployment", HavePrefix("redis-small-"))))),
		), "the legacy db migrated, three records restored from BOSH, the orphan flagged, concourse unmatched; "+
			"the platform lacks the first deployment's instance (recorded since yesterday)")
		// The first run restored three of the platform's instances from their deployments (reported platform-only,
		// restorable from a deployment); the next one holds them in step.
		Eventually(func() int {
			code, _ := d.do("POST", "/b/reconcile?wait=60s", "operator", "operator")
			return code
		}).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Equal(200))
		code, body := d.do("GET", "/b/reconcile", "operator", "operator")
		Expect(code).To(Equal(200))
		Expect(decode(body)).To(HaveKeyWithValue("platform", And(HaveKeyWithValue("state", "known"),
			HaveKeyWithValue("counts", And(HaveKeyWithValue("orphan_deployment", 1.0), HaveKeyWithValue("platform_only", 1.0),
				HaveKeyWithValue("in_step", 3.0), HaveKeyWithValue("orphan", 1.0))),
			HaveKeyWithValue("platform_only", ConsistOf(HaveKeyWithValue("instance_id", "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"))))),
			"one instance only the platform has; the orphan-to-be's record beside the platform's")
		code, _ = d.get("/healthz", "", "")
		Expect(code).To(Equal(200))

		// The platform's broker is this daemon (once the script says so: it
		// points the CC's broker at the daemon when the daemon answers): an
		// instance a CF user creates is provisioned by it, and the cross-check
		// finds the two in step.
		Eventually(s.Out).WithTimeout(60 * time.Second).Should(gbytes.Say(`the Cloud Controller's broker "blacksmith" is this daemon`))
		cc := &ccClient{url: "http://127.0.0.1:9022"}
		space := cc.first("/v3/spaces?names=demo-space")
		plan := cc.first("/v3/service_plans?names=small&service_offering_names=redis")
		status, _ := cc.call("POST", "/v3/service_instances", fmt.Sprintf(
			`{"type":"managed","name":"walk-through","relationships":{"space":{"data":{"guid":%q}},"service_plan":{"data":{"guid":%q}}}}`, space, plan))
		Expect(status).To(Equal(202), "the CC accepts the create and calls the broker")
		Eventually(func() any {
			_, body := cc.call("GET", "/v3/service_instances?names=walk-through", "")
			resources, _ := body["resources"].([]any)
			if len(resources) != 1 {
				return nil
			}
			return resources[0].(map[string]any)["last_operation"]
		}).WithTimeout(60*time.Second).WithPolling(500*time.Millisecond).Should(And(
			HaveKeyWithValue("state", "succeeded"), HaveKeyWithValue("description", ContainSubstring("BOSH task"))),
			"the daemon deployed it and the CC polled it to the end")
		code, _ = d.do("POST", "/b/reconcile?wait=60s", "operator", "operator")
		Expect(code).To(Equal(200))
		code, body = d.do("GET", "/b/reconcile", "operator", "operator")
		Expect(code).To(Equal(200))
		Expect(decode(body)).To(HaveKeyWithValue("platform", HaveKeyWithValue("counts", And(
			HaveKeyWithValue("in_step", 4.0), HaveKeyWithValue("orphan_deployment", 1.0)))),
			"the instance the platform made is in step, not an orphan deployment")

		s.Terminate()
		Eventually(s).WithTimeout(30 * time.Second).Should(gexec.Exit())
		Expect(string(s.Out.Contents())).To(ContainSubstring("stopped Vault, the Director and Cloud Controller simulators and blacksmith"))
		for _, p := range ports {
			Eventually(func() bool { return listening(p) }).WithTimeout(10*time.Second).Should(BeFalse(), p+" still answers")
		}
	})
})

// listening says whether something accepts connections at addr.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// ccClient talks to make run's Cloud Controller simulator as a CF user's
// client does: a client-credentials token, then v3 calls with it.
type ccClient struct {
	url, token string
}

// call sends a v3 request with body (JSON, or none when empty) and returns
// the answer's status and decoded body.
func (c *ccClient) call(method, path, body string) (int, map[string]any) {
	GinkgoHelper()
	if c.token == "" {
		req, err := http.NewRequest("POST", c.url+"/login/oauth/token", strings.NewReader("grant_type=client_credentials"))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("blacksmith-cc", "secret")
		_, answer := c.send(req)
		c.token, _ = answer["access_token"].(string)
		Expect(c.token).NotTo(BeEmpty())
	}
	var in io.Reader
	if body != "" {
		in = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.url+path, in)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	return c.send(req)
}

// send does req and decodes its answer (none for an empty body).
func (c *ccClient) send(req *http.Request) (int, map[string]any) {
	GinkgoHelper()
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	var out map[string]any
	if len(strings.TrimSpace(string(raw))) > 0 {
		Expect(json.Unmarshal(raw, &out)).To(Succeed(), string(raw))
	}
	return res.StatusCode, out
}

// first is the guid of the first resource a v3 list answers.
func (c *ccClient) first(path string) string {
	GinkgoHelper()
	code, body := c.call("GET", path, "")
	Expect(code).To(Equal(200), path)
	resources, _ := body["resources"].([]any)
	Expect(resources).NotTo(BeEmpty(), path)
	return resources[0].(map[string]any)["guid"].(string)
}
