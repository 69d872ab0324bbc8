package sim_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("bosh logs and bosh variables", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: 10 * time.Millisecond, Name: "dir"})
		c = newClient(d)
		m := strings.Replace(twoRedis("r1"), "    release: redis\n  vm_type: small\n  persistent",
			"    release: redis\n    properties: {password: ((redis_password)), tls: ((tls.certificate))}\n  vm_type: small\n  persistent", 1)
		Expect(d.PutDeployment(m + "variables:\n- name: tls\n  type: certificate\n- name: admin\n  type: password\n")).To(Succeed())
	})

	It("fetches logs through a 'fetch logs' task whose result is the id of a tarball GET /resources/:id serves", func() {
		r := c.get("/deployments/r1/jobs/redis/*/logs?type=job")
		Expect(r.status).To(Equal(http.StatusFound))
		id := taskIDOf(r)
		t := c.waitTask(id)
		Expect(t).To(And(HaveKeyWithValue("state", "done"), HaveKeyWithValue("description", "fetch logs")))
		var stages []any
		for _, l := range ndjson(c.get("/tasks/" + itoa(id) + "/output?type=event").body) {
			if ev(l)["state"] == "started" {
				stages = append(stages, ev(l)["stage"])
			}
		}
		Expect(stages).To(ConsistOf(MatchRegexp(`^Fetching logs for redis/`+uuidRE.String()+` \(0\)$`),
			MatchRegexp(`^Fetching logs for redis/`+uuidRE.String()+` \(1\)$`), "Fetching group of logs"))

		blob := c.get("/resources/" + t["result"].(string))
		Expect(blob.status).To(Equal(http.StatusOK))
		Expect(blob.header.Get("Content-Type")).To(Equal("application/x-gzip"))
		gz, err := gzip.NewReader(bytes.NewReader(blob.body))
		Expect(err).NotTo(HaveOccurred())
		tr := tar.NewReader(gz)
		var names []string
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			Expect(err).NotTo(HaveOccurred())
			names = append(names, h.Name)
		}
		Expect(names).To(HaveLen(2))

		missing := c.get("/resources/nope")
		Expect(missing.status).To(Equal(http.StatusNotFound))
		Expect(missing.json()).To(Equal(map[string]any{"code": 100002.0, "description": "Resource 'nope' not found in the blobstore"}))
	})

	It("refuses logs of instances that do not exist or have no VM, as the Director does", func() {
		r := c.get("/deployments/r1/jobs/redis/5/logs")
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(r.json()).To(HaveKeyWithValue("code", 70001.0))
		Expect(c.get("/deployments/r1/jobs/nosuch/*/logs").json()).To(HaveKeyWithValue("code", 70001.0))
		Expect(c.get("/deployments/r1/jobs/smoke-tests/*/logs").status).To(Equal(http.StatusInternalServerError), "an errand has no VM")
		Expect(c.get("/deployments/nope/jobs/redis/*/logs").status).To(Equal(http.StatusNotFound))
	})

	It("lists the variables the manifest uses, named as the config server stores them", func() {
		got := c.getJSON("/deployments/r1/variables").([]any)
		var names []any
		for _, v := range got {
			names = append(names, ev(v)["name"])
			Expect(ev(v)["id"]).To(MatchRegexp(uuidRE.String()))
		}
		Expect(names).To(ConsistOf("/dir/r1/redis_password", "/dir/r1/tls", "/dir/r1/admin"))
		Expect(c.get("/deployments/nope/variables").status).To(Equal(http.StatusNotFound))
	})
})
