package bosh_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

// pageBack reads every event q selects, page after page, checking that each
// page is newest first and older than the previous one; it returns them
// and the number of requests.
func pageBack(ctx context.Context, c *bosh.Client, q bosh.EventQuery) ([]bosh.Event, int) {
	GinkgoHelper()
	var all []bosh.Event
	for requests := 1; ; requests++ {
		page, err := c.Events(ctx, q)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(page)).To(BeNumerically("<=", bosh.EventsPage))
		if len(page) == 0 {
			return all, requests
		}
		for _, e := range page {
			if len(all) > 0 {
				older, err := bosh.IDBefore(e.ID, all[len(all)-1].ID)
				Expect(err).NotTo(HaveOccurred())
				Expect(older).To(BeTrue(), "%s after %s", e.ID, all[len(all)-1].ID)
			}
			all = append(all, e)
		}
		q.BeforeID = page[len(page)-1].ID
	}
}

var _ = Describe("Events", func() {
	var (
		d   *sim.Director
		c   *bosh.Client
		ctx context.Context
		reg *prometheus.Registry
	)
	BeforeEach(func() {
		reg = prometheus.NewRegistry()
		d = startDirector(sim.Options{TaskDuration: -1})
		c = newClient(d, func(o *bosh.Options) { o.Name = "lab"; o.Metrics = bosh.NewMetrics(reg) })
		ctx = ctxFor(20 * time.Second)
	})

	It("pages back with before_id over more than 200 events: every event exactly once, newest first", func() {
		names := d.SeedDeployments(430, nil)
		task, err := c.Deploy(ctx, []byte(manifest("redis-e")))
		Expect(err).NotTo(HaveOccurred())
		_, err = c.WaitTask(ctx, task.ID, 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())

		all, requests := pageBack(ctx, c, bosh.EventQuery{})
		n := len(all) // 430 seeds, the deploy's deployment and lock events, its instances' and VMs'
		Expect(n).To(BeNumerically(">", 434))
		Expect(n).To(BeNumerically("<", 600))
		Expect(requests).To(Equal(3+1), "200, 200, the rest, then an empty page")
		for i, e := range all {
			Expect(e.ID).To(Equal(strconv.Itoa(n-i)), "each id once")
		}
		Expect(all[0]).To(And(HaveField("Action", "release"), HaveField("ObjectType", "lock"),
			HaveField("Task", strconv.Itoa(task.ID)), HaveField("User", "admin"), HaveField("Deployment", "redis-e")))
		Expect(all[1]).To(And(HaveField("Action", "create"), HaveField("ObjectType", "deployment"),
			HaveField("ObjectName", "redis-e"), HaveField("Error", "")))
		start := all[n-431] // the deploy's first event
		Expect(start).To(And(HaveField("ObjectType", "deployment"), HaveField("ParentID", "")))
		Expect(all[1].ParentID).To(Equal(start.ID))
		Expect(all[1].Timestamp).To(BeNumerically("~", time.Now().Unix(), 60))
		Expect(all[n-1]).To(And(HaveField("ObjectName", names[0]), HaveField("User", sim.AdminUser),
			HaveField("Task", ""), HaveField("ParentID", ""), HaveField("Instance", "")))

		Expect(d.Stats().Requests).To(HaveKeyWithValue("GET /events", 4))
		Expect(counter(reg, requestsTotal, req("GET", "/events", "2xx"))).To(Equal(4.0))
	})

	It("filters by deployment, object type, action and time, and names the failure of a deploy", func() {
		Expect(d.PutDeployment(manifest("redis-f"))).To(Succeed())
		d.FailNextTask("redis-f")
		task, err := c.Deploy(ctx, []byte(manifest("redis-f")))
		Expect(err).NotTo(HaveOccurred())
		failed, err := c.WaitTask(ctx, task.ID, 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.PutDeployment(manifest("redis-g"))).To(Succeed())

		events, err := c.Events(ctx, bosh.EventQuery{Deployment: "redis-f", ObjectType: "deployment", Action: "update"})
		Expect(err).NotTo(HaveOccurred())
		Expect(events).To(HaveLen(2))
		Expect(events[0]).To(And(HaveField("ParentID", events[1].ID), HaveField("Error", failed.Result),
			HaveField("Task", strconv.Itoa(task.ID))))

		for q, want := range map[string]bosh.EventQuery{
			"all":          {AfterTime: time.Now().Add(-time.Hour)},
			"none, after":  {AfterTime: time.Now().Add(time.Hour)},
			"none, before": {BeforeTime: time.Now().Add(-time.Hour)},
		} {
			events, err := c.Events(ctx, want)
			Expect(err).NotTo(HaveOccurred())
			if q == "all" {
				Expect(events).To(HaveLen(8), q)
			} else {
				Expect(events).To(BeEmpty(), q)
			}
		}
	})

	It("cannot reach the events the Director has pruned", func() {
		d.SeedDeployments(30, nil)
		d.Knobs().SetEventsKept(10)
		all, _ := pageBack(ctx, c, bosh.EventQuery{})
		Expect(all).To(HaveLen(10))
		Expect(all[9].ID).To(Equal("21"))
		older, err := c.Events(ctx, bosh.EventQuery{BeforeID: "21"})
		Expect(err).NotTo(HaveOccurred())
		Expect(older).To(BeEmpty(), "ids 1 to 20 are gone")
	})

	It("refuses a malformed before id without asking the Director", func() {
		for _, id := range []string{"12a", "-1", " 1", strings.Repeat("9", 21)} {
			_, err := c.Events(ctx, bosh.EventQuery{BeforeID: id})
			Expect(err).To(MatchError(ContainSubstring("not a decimal id of 1 to 20 digits")), id)
			Expect(err).To(MatchError(ContainSubstring(strconv.Quote(id))))
		}
		Expect(d.Stats().Requests).NotTo(HaveKey("GET /events"))
	})
})

var _ = Describe("Malformed event pages", func() {
	// event is a valid event with id and fields replaced or added.
	event := func(id string, extra ...string) string {
		fields := append([]string{`"id":` + id, `"timestamp":1751364612`, `"user":"admin"`, `"action":"create"`,
			`"object_type":"deployment"`, `"object_name":"r1"`, `"task":"7"`, `"deployment":"r1"`, `"context":{}`}, extra...)
		return "{" + strings.Join(fields, ",") + "}"
	}
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}
	}

	DescribeTable("are errors naming the event and the problem, never a panic",
		func(body string, q bosh.EventQuery, problem string) {
			c := fakeDirector(false, "GET /events", answer(body))
			events, err := c.Events(ctxFor(10*time.Second), q)
			Expect(err).To(MatchError(ContainSubstring(`bosh director "fake": decoding GET /events: ` + problem)))
			Expect(err.Error()).To(HavePrefix("listing events: "))
			Expect(len(err.Error())).To(BeNumerically("<", 1200))
			Expect(events).To(BeNil())
		},
		Entry("an id that is not decimal", "["+event(`"12a"`)+"]", bosh.EventQuery{},
			`event 1: id "12a": not a decimal id of 1 to 20 digits`),
		Entry("an id as a number", "["+event(`"9"`)+","+event(`8`)+"]", bosh.EventQuery{}, `event 2: id is a number, not a string`),
		Entry("an id of 21 digits", "["+event(`"`+strings.Repeat("1", 21)+`"`)+"]", bosh.EventQuery{},
			`event 1: id "111111111111111111111": not a decimal id`),
		Entry("no id", `[{"timestamp":1}]`, bosh.EventQuery{}, `event 1: has no id`),
		Entry("a parent id that is not decimal", "["+event(`"9"`, `"parent_id":"x"`)+"]", bosh.EventQuery{},
			`event 1 (id 9): parent_id "x": not a decimal id`),
		Entry("a timestamp as a string", `[{"id":"9","timestamp":"1751364612"}]`, bosh.EventQuery{},
			`event 1 (id 9): timestamp is a string, not a number`),
		Entry("a timestamp with a fraction", `[{"id":"9","timestamp":1.5}]`, bosh.EventQuery{},
			`event 1 (id 9): timestamp "1.5" is not a whole number of seconds`),
		Entry("no timestamp", `[{"id":"9"}]`, bosh.EventQuery{}, `event 1 (id 9): has no timestamp`),
		Entry("a user that is a number", "["+event(`"9"`)+","+event(`"8"`, `"user":42`)+"]", bosh.EventQuery{},
			`event 2 (id 8): user is a number, not a string`),
		Entry("an error that is an object", "["+event(`"9"`, `"error":{"code":1}`)+"]", bosh.EventQuery{},
			`event 1 (id 9): error is an object, not a string`),
		Entry("an event that is not an object", `[["9"]]`, bosh.EventQuery{}, `event 1: is an array, not a JSON object`),
		Entry("an answer that is not an array", `{"id":"9"}`, bosh.EventQuery{}, `not a JSON array of events: `),
		Entry("a cut answer", "["+event(`"9"`), bosh.EventQuery{}, `not a JSON array of events: unexpected end of JSON input`),
		Entry("oldest first", "["+event(`"8"`)+","+event(`"9"`)+"]", bosh.EventQuery{},
			`event 2 (id 9) is not older than event 1 (id 8): the Director answers newest first`),
		Entry("the same id twice", "["+event(`"9"`)+","+event(`"09"`)+"]", bosh.EventQuery{},
			`event 2 (id 09) is not older than event 1 (id 9)`),
		Entry("events not older than before_id", "["+event(`"30"`)+"]", bosh.EventQuery{BeforeID: "30"},
			`event 1 (id 30) is not older than before_id 30`),
		Entry("more than a page", "["+strings.Repeat(event(`"9"`)+",", 200)+event(`"9"`)+"]", bosh.EventQuery{},
			`201 events, more than the 200 the Director answers at once`),
	)

	It("refuses an answer over 8 MiB without reading it whole", func() {
		c := fakeDirector(false, "GET /events", endless(200, event(`"9"`)))
		_, err := c.Events(ctxFor(30*time.Second), bosh.EventQuery{})
		Expect(err).To(MatchError(bosh.ErrAnswerTooLarge))
		Expect(err).To(MatchError(ContainSubstring("the Director's answer to GET /events is over 8 MiB")))
	})

	It("reads ids beyond 64 bits, absent and null fields as empty, and ignores unknown ones", func() {
		body := fmt.Sprintf(`[%s,{"id":"18446744073709551616","timestamp":1,"user":null,"new_field":[1]}]`,
			event(`"99999999999999999999"`, `"instance":"redis/0"`, `"error":"boom"`, `"parent_id":"1"`))
		events, err := fakeDirector(false, "GET /events", answer(body)).Events(ctxFor(10*time.Second), bosh.EventQuery{})
		Expect(err).NotTo(HaveOccurred())
		Expect(events).To(Equal([]bosh.Event{
			{ID: "99999999999999999999", ParentID: "1", Timestamp: 1751364612, User: "admin", Action: "create",
				ObjectType: "deployment", ObjectName: "r1", Task: "7", Deployment: "r1", Instance: "redis/0", Error: "boom"},
			{ID: "18446744073709551616", Timestamp: 1},
		}))
	})
})

var _ = DescribeTable("IDBefore compares event ids as numbers",
	func(a, b string, want bool, problem string) {
		got, err := bosh.IDBefore(a, b)
		if problem != "" {
			Expect(err).To(MatchError(ContainSubstring(problem)))
			return
		}
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
	},
	Entry("9 before 10", "9", "10", true, ""),
	Entry("10 not before 9, as text would say", "10", "9", false, ""),
	Entry("an id not before itself", "4711", "4711", false, ""),
	Entry("leading zeros ignored", "007", "8", true, ""),
	Entry("beyond 64 bits", "18446744073709551615", "99999999999999999999", true, ""),
	Entry("an empty id", "", "1", false, `"": not a decimal id of 1 to 20 digits`),
	Entry("a negative id", "1", "-2", false, `"-2": not a decimal id`),
	Entry("21 digits", "1", strings.Repeat("1", 21), false, `not a decimal id`),
	Entry("a blank", " 1", "2", false, `" 1": not a decimal id`),
)
