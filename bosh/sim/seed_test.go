package sim_test

import (
	"fmt"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var seededName = regexp.MustCompile(`^(redis-small|redis-large|postgresql-small)-([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$`)

// seededManifest is the part of a seeded manifest the tests read.
type seededManifest struct {
	Name     string `yaml:"name"`
	Releases []struct {
		Name, Version string
	} `yaml:"releases"`
	InstanceGroups []struct {
		Name      string `yaml:"name"`
		Instances int    `yaml:"instances"`
		Lifecycle string `yaml:"lifecycle"`
	} `yaml:"instance_groups"`
	Properties struct {
		Blacksmith struct {
			ServiceID  string `yaml:"service_id"`
			PlanID     string `yaml:"plan_id"`
			InstanceID string `yaml:"instance_id"`
		} `yaml:"blacksmith"`
	} `yaml:"properties"`
}

func heapBytes() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

var _ = Describe("seeded deployments", func() {
	It("are named {planID}-{uuid} with realistic manifests that agree with the API", func() {
		d := start(sim.Options{Seed: 30, TaskDuration: -1})
		c := newClient(d)
		list := c.getJSON("/deployments").([]any)
		Expect(list).To(HaveLen(30))
		plans := map[string]int{}
		for _, e := range list {
			name := e.(map[string]any)["name"].(string)
			m := seededName.FindStringSubmatch(name)
			Expect(m).NotTo(BeNil(), name)
			plans[m[1]]++

			var man seededManifest
			Expect(yaml.Unmarshal([]byte(c.getJSON("/deployments/" + name).(map[string]any)["manifest"].(string)), &man)).To(Succeed())
			Expect(man.Name).To(Equal(name))
			Expect(man.Properties.Blacksmith.PlanID).To(Equal(m[1]))
			Expect(man.Properties.Blacksmith.InstanceID).To(Equal(m[2]))
			Expect(man.Properties.Blacksmith.ServiceID).To(Equal(strings.SplitN(m[1], "-", 2)[0]))
			Expect(e).To(HaveKeyWithValue("releases", []any{map[string]any{"name": man.Releases[0].Name, "version": man.Releases[0].Version}}))
			Expect(c.getJSON("/deployments/" + name + "/vms")).To(HaveLen(man.InstanceGroups[0].Instances))
			Expect(c.getJSON("/deployments/" + name + "/instances")).To(HaveLen(man.InstanceGroups[0].Instances + 1))
		}
		Expect(plans).To(Equal(map[string]int{"redis-small": 10, "redis-large": 10, "postgresql-small": 10}))
		Expect(c.getJSON("/releases")).To(HaveLen(2)) // postgres, redis
	})

	It("take the plans asked for and can be updated through tasks like any deployment", func() {
		d := start(sim.Options{TaskDuration: -1})
		c := newClient(d)
		names := d.SeedDeployments(4, []sim.SeedPlan{{ServiceID: "mysql", PlanID: "mysql-tiny", Release: "pxc", Instances: 2}})
		Expect(names).To(HaveLen(4))
		Expect(names[0]).To(HavePrefix("mysql-tiny-"))
		Expect(c.getJSON("/deployments/" + names[0] + "/vms")).To(HaveLen(2))
		Expect(c.getJSON("/deployments")).To(ContainElement(HaveKeyWithValue("releases", []any{map[string]any{"name": "pxc", "version": "1.0.0"}})))
		Expect(c.waitTask(c.deploy(redisManifest(names[0], "9")))["state"]).To(Equal("done"))
		Expect(c.getJSON("/deployments/" + names[0] + "/vms")).To(HaveLen(1))
	})

	It("are not made from plans New would refuse", func() {
		d := start(sim.Options{TaskDuration: -1})
		Expect(d.SeedDeployments(3, []sim.SeedPlan{{PlanID: "p", Release: "a: b"}, {PlanID: "a/b", Release: "r"}})).To(BeNil())
		Expect(d.Stats().Deployments).To(BeZero())
	})

	It("scale to 10,000: fast listings, modest memory, hundreds of concurrent requests", func() {
		before := heapBytes()
		d := start(sim.Options{TaskDuration: -1})
		t0 := time.Now()
		names := d.SeedDeployments(10000, nil)
		seedTime := time.Since(t0)
		heap := heapBytes() - before
		Expect(names).To(HaveLen(10000))
		Expect(heap).To(BeNumerically("<", 32<<20), "heap for 10,000 deployments")
		Expect(seedTime).To(BeNumerically("<", 2*time.Second), "seeding stays cheap, one event each included")

		c := newClient(d)
		events := c.getJSON("/events").([]any)
		Expect(events).To(HaveLen(200))
		Expect(events[0]).To(HaveKeyWithValue("object_name", names[9999]))
		Expect(c.getJSON("/events?before_id=2")).To(ConsistOf(HaveKeyWithValue("object_name", names[0])),
			"the 10,000 events of 10,000 seeded deployments are all kept")
		t0 = time.Now()
		first := c.get("/deployments")
		cold := time.Since(t0)
		Expect(first.status).To(Equal(http.StatusOK))
		var got []string
		for _, e := range first.json().([]any) {
			got = append(got, e.(map[string]any)["name"].(string))
		}
		Expect(got).To(HaveLen(10000))
		Expect(sort.StringsAreSorted(got)).To(BeTrue())
		Expect(slices.Sorted(slices.Values(names))).To(Equal(got))

		var warm []time.Duration
		for range 20 {
			t0 = time.Now()
			Expect(c.get("/deployments?exclude_configs=true&exclude_stemcells=true").status).To(Equal(http.StatusOK))
			warm = append(warm, time.Since(t0))
		}
		slices.Sort(warm)
		AddReportEntry("median listing of 10,000", warm[10].String()) // reported, not asserted: speed is make bench's job

		var wg sync.WaitGroup
		statuses := make([]int, 400)
		t0 = time.Now()
		for i := range statuses {
			wg.Go(func() {
				defer GinkgoRecover()
				path := "/deployments/" + names[i*7%len(names)]
				if i%20 == 0 {
					path = "/deployments?exclude_configs=true"
				}
				statuses[i] = c.get(path).status
			})
		}
		wg.Wait()
		burst := time.Since(t0)
		Expect(slices.Compact(statuses)).To(Equal([]int{http.StatusOK}))
		AddReportEntry("10,000 seeded deployments", fmt.Sprintf(
			"seed %v, heap %.1f MiB, listing %d bytes, first listing %v, median cached listing %v, 400 concurrent requests %v",
			seedTime.Round(time.Millisecond), float64(heap)/(1<<20), len(first.body), cold.Round(time.Millisecond),
			warm[10].Round(time.Millisecond), burst.Round(time.Millisecond)))
	})
})
