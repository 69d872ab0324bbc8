package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"gopkg.in/yaml.v3"
	osb "sigs.k8s.io/go-open-service-broker-client/v2"
)

// goInternals matches what Go's own error texts would show a platform user.
const goInternals = `Go struct|Go value|json: cannot|json: unknown|(?i)unmarshal|domain\.|reflect|\[\]uint8|map\[string\]`

// send sends an authenticated OSB request with body as given (length -1:
// chunked) and returns the status, the body and how long the answer took.
func (d *daemon) send(method, path string, body io.Reader, length int64) (int, string, time.Duration) {
	GinkgoHelper()
	req, err := http.NewRequest(method, d.url+path, body)
	Expect(err).NotTo(HaveOccurred())
	req.ContentLength = length
	req.SetBasicAuth(brokerUser, brokerPass)
	req.Header.Set("X-Broker-API-Version", "2.14")
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	return res.StatusCode, readAll(res), time.Since(start)
}

// rssBytes is the resident set size of the daemon's process.
func (d *daemon) rssBytes() int64 {
	GinkgoHelper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.session.Command.Process.Pid))
	Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			Expect(err).NotTo(HaveOccurred())
			return kb << 10
		}
	}
	Fail("no VmRSS in /proc status")
	return 0
}

var _ = Describe("The broker, tried as an attacker would", Ordered, func() {
	var d *daemon
	BeforeAll(func() {
		d = startDaemon("")
	})

	provision := func(id, body string) (int, string) {
		code, answer, _ := d.send(http.MethodPut, "/v2/service_instances/"+id+"?accepts_incomplete=true", strings.NewReader(body), int64(len(body)))
		return code, answer
	}

	It("refuses the max_connections injection, and the Director never sees it", func() {
		code, body := provision("e2e-inj-1", `{"service_id":"postgresql","plan_id":"postgresql-small","organization_guid":"o","space_guid":"s",`+
			`"parameters":{"max_connections":"100\n            hba_entries: [\"host all all 0.0.0.0/0 trust\"]"}}`)
		Expect(code).To(Equal(http.StatusBadRequest), body)
		Expect(decode(body)["description"]).To(And(ContainSubstring("max_connections"), ContainSubstring("integer")))
		code, _ = director("/deployments/postgresql-small-e2e-inj-1")
		Expect(code).To(Equal(http.StatusNotFound))

		code, body = provision("e2e-inj-2", `{"service_id":"redis","plan_id":"redis-small","organization_guid":"o","space_guid":"s",`+
			`"parameters":{"maxmemory":"100mb\naddons:\n- name: evil"}}`)
		Expect(code).To(Equal(http.StatusBadRequest), body)
		Expect(decode(body)["description"]).To(ContainSubstring("maxmemory"))
	})

	It("deploys declared parameters where the template puts them, and nothing else", func() {
		client := newOSBClient(d, brokerUser, brokerPass)
		code, body := provision("e2e-inj-3", `{"service_id":"postgresql","plan_id":"postgresql-small","organization_guid":"o","space_guid":"s",`+
			`"parameters":{"max_connections":150,"database":"orders"}}`)
		Expect(code).To(Equal(http.StatusAccepted), body)
		eventuallySucceeded(client, "e2e-inj-3")
		code, body = director("/deployments/postgresql-small-e2e-inj-3")
		Expect(code).To(Equal(http.StatusOK), body)
		var dep struct{ Manifest string }
		Expect(yaml.Unmarshal([]byte(body), &dep)).To(Succeed())
		var m struct {
			Properties     map[string]any
			InstanceGroups []struct {
				Jobs []struct{ Properties map[string]any }
			} `yaml:"instance_groups"`
		}
		Expect(yaml.Unmarshal([]byte(dep.Manifest), &m)).To(Succeed(), dep.Manifest)
		dbs := m.InstanceGroups[0].Jobs[0].Properties["databases"].(map[string]any)
		Expect(dbs["max_connections"]).To(Equal(150))
		Expect(dep.Manifest).NotTo(ContainSubstring("hba_entries"))
		Expect(m.Properties).To(HaveLen(1), "only properties.blacksmith")
	})

	It("answers a 56 MB body with 413 within a second, its memory growing less than 20 MB", func() {
		params := strings.Repeat(`"k0000000": 1, `, 56<<20/15)
		big := []byte(`{"service_id":"redis","plan_id":"redis-small","parameters":{` + params + `"end": 1}}`)
		before := d.rssBytes()
		code, body, took := d.send(http.MethodPut, "/v2/service_instances/e2e-big-1?accepts_incomplete=true", bytes.NewReader(big), int64(len(big)))
		Expect(code).To(Equal(http.StatusRequestEntityTooLarge), body)
		Expect(took).To(BeNumerically("<", time.Second))
		growth := d.rssBytes() - before
		Expect(growth).To(BeNumerically("<", 20<<20))
		AddReportEntry("56 MB provision body", fmt.Sprintf("413 in %s, RSS growth %d KiB", took, growth>>10))

		code, body, _ = d.send(http.MethodPut, "/v2/service_instances/e2e-big-1?accepts_incomplete=true", io.MultiReader(bytes.NewReader(big)), -1)
		Expect(code).To(Equal(http.StatusRequestEntityTooLarge), body)
		Expect(d.rssBytes() - before).To(BeNumerically("<", 20<<20))
	})

	It("refuses a 10,240-character instance id", func() {
		code, body := provision(strings.Repeat("a", 10240), `{"service_id":"redis","plan_id":"redis-small"}`)
		Expect(code).To(Equal(http.StatusBadRequest), body)
		Expect(decode(body)["description"]).To(ContainSubstring("instance id is 10240 characters; at most 64"))
	})

	It("refuses parameters that would grow an index shard (900 KB) with 400", func() {
		body := `{"service_id":"redis","plan_id":"redis-small","parameters":{"maxmemory":"` + strings.Repeat("x", 900<<10) + `"}}`
		code, answer := provision("e2e-big-2", body)
		Expect(code).To(Equal(http.StatusRequestEntityTooLarge), answer)
		body = `{"service_id":"redis","plan_id":"redis-small","parameters":{"maxmemory":"` + strings.Repeat("x", 20<<10) + `"}}`
		code, answer = provision("e2e-big-2", body)
		Expect(code).To(Equal(http.StatusBadRequest), answer)
		Expect(decode(answer)["description"]).To(ContainSubstring("at most 16384"))
	})

	DescribeTable("answers malformed requests with 400 and no Go internals",
		func(body, want string) {
			code, answer := provision("e2e-bad-1", body)
			Expect(code).To(Equal(http.StatusBadRequest), answer)
			Expect(decode(answer)["description"]).To(ContainSubstring(want))
			Expect(answer).NotTo(MatchRegexp(goInternals))
		},
		Entry("malformed JSON", `{"service_id": `, "not valid JSON"),
		Entry("a number for a string", `{"service_id": 1, "plan_id": "redis-small"}`, "field service_id must be a string"),
		Entry("parameters nested 5,000 deep", `{"service_id":"redis","plan_id":"redis-small","parameters":{"a":`+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+`}}`, "levels deep"),
		Entry("parameters nested 298 deep", `{"service_id":"redis","plan_id":"redis-small","parameters":{"a":`+strings.Repeat("[", 297)+strings.Repeat("]", 297)+`}}`, "levels deep"),
	)

	It("closes a connection that sends nothing, and an idle keep-alive one", func() {
		addr := freeAddr()
		fast := &daemon{url: "http://" + addr, config: writeConfig(addr, vaultServer.Addr, "")}
		text, err := os.ReadFile(fast.config)
		Expect(err).NotTo(HaveOccurred())
		text = []byte(strings.Replace(string(text), "operator:", "  read_timeout: 2s\n  idle_timeout: 1s\noperator:", 1))
		Expect(os.WriteFile(fast.config, text, 0o600)).To(Succeed())
		DeferCleanup(fast.stop)
		fast.start()
		fast.waitReady()

		silent, err := net.Dial("tcp", addr)
		Expect(err).NotTo(HaveOccurred())
		defer silent.Close()
		Expect(closedWithin(silent, 5*time.Second)).To(BeTrue(), "a connection that sends nothing is closed after read_timeout")

		idle, err := net.Dial("tcp", addr)
		Expect(err).NotTo(HaveOccurred())
		defer idle.Close()
		_, err = fmt.Fprintf(idle, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		Expect(err).NotTo(HaveOccurred())
		res, err := http.ReadResponse(bufio.NewReader(idle), nil)
		Expect(err).NotTo(HaveOccurred())
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		Expect(closedWithin(idle, 4*time.Second)).To(BeTrue(), "an idle keep-alive connection is closed after idle_timeout")

		slow, err := net.Dial("tcp", addr)
		Expect(err).NotTo(HaveOccurred())
		defer slow.Close()
		_, err = fmt.Fprintf(slow, "PUT /v2/service_instances/slow?accepts_incomplete=true HTTP/1.1\r\nHost: %s\r\n"+
			"Authorization: Basic %s\r\nX-Broker-API-Version: 2.14\r\nContent-Length: 100\r\n\r\n{\"service_id\"",
			addr, base64.StdEncoding.EncodeToString([]byte(brokerUser+":"+brokerPass)))
		Expect(err).NotTo(HaveOccurred())
		Expect(closedWithin(slow, 5*time.Second)).To(BeTrue(), "a body that never ends is cut after read_timeout")
	})
})

// closedWithin says whether the server closes conn within d.
func closedWithin(conn net.Conn, d time.Duration) bool {
	Expect(conn.SetReadDeadline(time.Now().Add(d))).To(Succeed())
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

var _ = Describe("Deprovision and unbind", func() {
	It("back up every secret they delete, so that blacksmith restore brings the instance back whole", func() {
		ctx := context.Background()
		const id = "e2e-restore-whole"
		d := startDaemon("")
		client := newOSBClient(d, brokerUser, brokerPass)
		_, err := client.ProvisionInstance(&osb.ProvisionRequest{InstanceID: id, AcceptsIncomplete: true,
			ServiceID: "redis", PlanID: "redis-small", OrganizationGUID: "o", SpaceGUID: "s"})
		Expect(err).NotTo(HaveOccurred())
		eventuallySucceeded(client, id)
		for _, bid := range []string{"b-keep", "b-gone"} {
			_, err = client.Bind(&osb.BindRequest{BindingID: bid, InstanceID: id, ServiceID: "redis", PlanID: "redis-small", AppGUID: strPtr("app")})
			Expect(err).NotTo(HaveOccurred())
		}
		_, err = client.Unbind(&osb.UnbindRequest{BindingID: "b-gone", InstanceID: id, ServiceID: "redis", PlanID: "redis-small"})
		Expect(err).NotTo(HaveOccurred())
		want := map[string]map[string]any{}
		for _, p := range []string{id + "/credentials", id + "/bindings/b-keep"} {
			s, ok, err := store.Secret(ctx, p)
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeTrue(), p)
			want[p] = s
		}
		record, err := store.Record(ctx, id)
		Expect(err).NotTo(HaveOccurred())

		_, err = client.DeprovisionInstance(&osb.DeprovisionRequest{InstanceID: id, AcceptsIncomplete: true, ServiceID: "redis", PlanID: "redis-small"})
		Expect(err).NotTo(HaveOccurred())
		eventuallyDeleted(client, id)
		for p := range want {
			_, ok, err := store.Secret(ctx, p)
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeFalse(), "deleted: "+p)
		}

		cmd := exec.Command(blacksmithBin, "restore", "-c", d.config, id)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(s).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
		Expect(string(s.Out.Contents())).To(And(ContainSubstring("record, "), ContainSubstring("manifest, 3 secrets")))
		back, err := store.Record(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(back).NotTo(BeNil())
		Expect(back.ServiceID).To(Equal(record.ServiceID))
		for p, data := range want {
			s, ok, err := store.Secret(ctx, p)
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeTrue(), p)
			Expect(s).To(Equal(data), p)
		}
		ids, ok, err := store.Secret(ctx, id+"/binding-ids")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(ids["ids"]).To(Equal([]any{"b-keep"}))
	})
})

var _ = Describe("A Director whose /info names a plain-http UAA elsewhere", func() {
	It("never gets the client secret: the daemon refuses, naming the URL", func() {
		// What /info names: a listener on another loopback address that counts who calls.
		uaa, err := net.Listen("tcp", "127.0.0.2:0")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(uaa.Close)
		var calls atomic.Int64
		go func() {
			for {
				conn, err := uaa.Accept()
				if err != nil {
					return
				}
				calls.Add(1)
				conn.Close()
			}
		}()
		uaaURL := "http://" + uaa.Addr().String()
		simAddr := freeAddr()
		sim, err := gexec.Start(exec.Command(simBin, "-listen", simAddr, "-auth", "uaa", "-uaa-url", uaaURL,
			"-client", "blacksmith", "-client-secret", "uaa-secret-e2e"), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { sim.Terminate().Wait(10 * time.Second) })
		Eventually(func() error { _, err := http.Get("http://" + simAddr + "/info"); return err }).Should(Succeed())

		addr := freeAddr()
		d := &daemon{url: "http://" + addr, config: writeConfig(addr, vaultServer.Addr, "")}
		text, err := os.ReadFile(d.config)
		Expect(err).NotTo(HaveOccurred())
		conf := strings.Replace(string(text), directorURL, "http://"+simAddr, 1)
		conf = strings.Replace(conf, "  username: "+simUser+"\n  password: "+simPass+"\n",
			"  client_id: blacksmith\n  client_secret: uaa-secret-e2e\n", 1)
		Expect(os.WriteFile(d.config, []byte(conf), 0o600)).To(Succeed())
		DeferCleanup(d.stop)
		d.start()
		d.waitReady()
		Eventually(func() string { return string(d.session.Err.Contents()) }).WithTimeout(20 * time.Second).Should(
			ContainSubstring(`refusing to send the client secret to UAA at \"` + uaaURL + `/oauth/token\": the token URL must be https`))
		Expect(calls.Load()).To(BeZero(), "nothing was sent to the token URL")
		Expect(string(d.session.Err.Contents())).NotTo(ContainSubstring("uaa-secret-e2e"), "the secret is never logged")
	})
})
