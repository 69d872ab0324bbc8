package main_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

var urlRE = regexp.MustCompile(`url=(https?://127\.0\.0\.1:\d+)`)

// startSim runs the binary and returns its session and the URL it logs.
func startSim(args ...string) (*gexec.Session, string) {
	session, err := gexec.Start(exec.Command(binary, args...), GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait() })
	Eventually(session.Err).Should(gbytes.Say("bosh director simulator listening"))
	m := urlRE.FindSubmatch(session.Err.Contents())
	Expect(m).NotTo(BeNil())
	return session, string(m[1])
}

func getJSON(c *http.Client, req *http.Request) any {
	res, err := c.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(res.StatusCode).To(Equal(http.StatusOK), string(body))
	var v any
	Expect(json.Unmarshal(body, &v)).To(Succeed())
	return v
}

var _ = Describe("bosh-director-sim", func() {
	It("serves seeded deployments with the credentials given and stops on SIGTERM", func() {
		session, base := startSim("-seed", "5", "-user", "ops", "-password", "pw", "-task-duration", "1ms",
			"-failure", "endpoint=/releases,status=503")
		req, _ := http.NewRequest(http.MethodGet, base+"/deployments", nil)
		req.SetBasicAuth("ops", "pw")
		Expect(getJSON(http.DefaultClient, req)).To(HaveLen(5))
		Expect(status(req, "admin", "admin")).To(Equal(http.StatusUnauthorized))
		req.URL.Path = "/releases"
		Expect(status(req, "ops", "pw")).To(Equal(http.StatusServiceUnavailable))

		session.Terminate()
		Eventually(session).Should(gexec.Exit(0))
		Expect(session.Err).To(gbytes.Say("bosh director simulator stopping"))
	})

	It("serves HTTPS in UAA mode with the CA written where asked, and stops on SIGINT", func() {
		caPath := filepath.Join(GinkgoT().TempDir(), "ca.pem")
		session, base := startSim("-tls", "-ca-cert", caPath, "-auth", "uaa", "-client", "bs", "-client-secret", "s3",
			"-token-ttl", "30s", "-external-host", "127.0.0.2:25555")
		Expect(base).To(HavePrefix("https://"))
		pem, err := os.ReadFile(caPath)
		Expect(err).NotTo(HaveOccurred())
		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM(pem)).To(BeTrue())
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

		info := getJSON(c, must(http.NewRequest(http.MethodGet, base+"/info", nil))).(map[string]any)
		Expect(info["user_authentication"]).To(HaveKeyWithValue("type", "uaa"))
		req := must(http.NewRequest(http.MethodPost, base+"/oauth/token",
			strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode())))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("bs", "s3")
		tok := getJSON(c, req).(map[string]any)
		Expect(tok).To(HaveKeyWithValue("expires_in", 30.0))
		req = must(http.NewRequest(http.MethodGet, base+"/deployments", nil))
		req.Header.Set("Authorization", "bearer "+tok["access_token"].(string))
		Expect(getJSON(c, req)).To(BeEmpty())

		Expect(session.Command.Process.Signal(syscall.SIGINT)).To(Succeed())
		Eventually(session).Should(gexec.Exit(0))
	})

	It("seeds deployments from the plans given on the command line, keeping the events asked for", func() {
		_, base := startSim("-seed", "4", "-seed-plan", "service_id=mysql,plan_id=mysql-tiny,release=pxc,version=1.2.3,instances=2",
			"-seed-plan", "plan_id=kafka-small,release=kafka", "-events-kept", "3")
		req := must(http.NewRequest(http.MethodGet, base+"/deployments", nil))
		req.SetBasicAuth("admin", "admin")
		var names []string
		for _, d := range getJSON(http.DefaultClient, req).([]any) {
			names = append(names, d.(map[string]any)["name"].(string))
		}
		Expect(names).To(HaveLen(4))
		Expect(names).To(HaveEach(MatchRegexp(`^(mysql-tiny|kafka-small)-[0-9a-f-]{36}$`)))
		Expect(names).To(ContainElement(HavePrefix("mysql-tiny-")))
		Expect(names).To(ContainElement(HavePrefix("kafka-small-")))

		req.URL.Path = "/events"
		events := getJSON(http.DefaultClient, req).([]any)
		Expect(events).To(HaveLen(3), "one create event per seeded deployment, the oldest dropped")
		Expect(events[2]).To(HaveKeyWithValue("id", "2"))
	})

	It("takes the errand jobs and the errands' scripted outcomes from the command line", func() {
		_, base := startSim("-errand-job", "status-check", "-errand-job", "broker-registrar",
			"-errand", `errand=smoke-tests,deployment=d1,exit_code=2,stdout=1 failed\n,stderr=boom`)
		Expect(getJSON(http.DefaultClient, must(http.NewRequest(http.MethodGet, base+"/_sim/errands", nil)))).To(Equal(map[string]any{
			"jobs": []any{"broker-registrar", "status-check"},
			"outcomes": []any{map[string]any{"errand": "smoke-tests", "deployment": "d1", "exit_code": 2.0,
				"stdout": "1 failed\n", "stderr": "boom"}}}))
	})

	It("exits 2 on bad flags and 1 when it cannot start", func() {
		for _, bad := range [][]string{{"-no-such-flag"}, {"-failure", "rate=2"}, {"-failure", "status=42"}, {"extra-argument"},
			{"-seed-plan", "plan_id=p"}, {"-seed-plan", "plan_id=p,release=a b"}, {"-errand", "exit_code=1"},
			{"-errand", "errand=e,exit_code=-1"}, {"-errand", "errand=e,colour=red"}} {
			session, err := gexec.Start(exec.Command(binary, bad...), GinkgoWriter, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			Eventually(session).Should(gexec.Exit(2), "%v", bad)
		}
		session, err := gexec.Start(exec.Command(binary, "-auth", "ldap"), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session).Should(gexec.Exit(1))
		Expect(session.Err).To(gbytes.Say(`auth \\"ldap\\"`))

		session, err = gexec.Start(exec.Command(binary, "-ca-cert", filepath.Join(GinkgoT().TempDir(), "ca.pem")), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session).Should(gexec.Exit(1))
		Expect(session.Err).To(gbytes.Say("only written with TLS on"))

		session, err = gexec.Start(exec.Command(binary, "-events-kept", "-1"), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session).Should(gexec.Exit(1))
		Expect(session.Err).To(gbytes.Say("events kept -1 is less than 1"))
	})
})

// status sends req with basic credentials and returns the status.
func status(req *http.Request, user, pass string) int {
	req.SetBasicAuth(user, pass)
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	res.Body.Close()
	return res.StatusCode
}

func must[T any](v T, err error) T {
	Expect(err).NotTo(HaveOccurred())
	return v
}
