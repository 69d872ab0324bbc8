package dashboard_test

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// list is GET /b/instances over o.fleet: the reconciler's search (id and
// deployment here), filters and paging, by id.
func (o *operator) list(_ context.Context, q reconciler.InstanceQuery) (reconciler.InstancePage, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	limit := q.Limit
	if limit == 0 {
		limit = reconciler.DefaultListLimit
	}
	page := reconciler.InstancePage{Instances: []reconciler.InstanceSummary{}, Plans: []string{}, Directors: []string{}}
	search := strings.ToLower(q.Search)
	for _, in := range o.fleet {
		if !slices.Contains(page.Plans, in.PlanID) {
			page.Plans = append(page.Plans, in.PlanID)
		}
		if !slices.Contains(page.Directors, in.Director) {
			page.Directors = append(page.Directors, in.Director)
		}
		if (q.State != "" && in.State != q.State) || (q.Plan != "" && in.PlanID != q.Plan) || (q.Director != "" && in.Director != q.Director) ||
			!strings.Contains(strings.ToLower(in.InstanceID+"\x00"+in.Deployment), search) {
			continue
		}
		page.Total++
		switch {
		case in.InstanceID <= q.After:
		case len(page.Instances) < limit:
			page.Instances = append(page.Instances, in)
		case page.Next == "":
			page.Next = page.Instances[len(page.Instances)-1].InstanceID
		}
	}
	slices.Sort(page.Plans)
	slices.Sort(page.Directors)
	return page, nil
}

// listed are the queries GET /b/instances got, decoded.
func (o *operator) listed() []url.Values {
	o.mu.Lock()
	defer o.mu.Unlock()
	var qs []url.Values
	for _, raw := range o.lists {
		v, err := url.ParseQuery(strings.TrimPrefix(raw, "?"))
		Expect(err).NotTo(HaveOccurred())
		qs = append(qs, v)
	}
	return qs
}

var _ = Describe("the dashboard's instance list, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	// A deployment name that is markup.
	const hostile = `<img src=x id=pwned onerror="window.pwned=1">`

	BeforeEach(func() {
		op = &operator{status: reconciler.Status{Enabled: true, Phase: report.PhaseIdle, Orphans: []report.Orphan{},
			Unmatched: []report.Unmatched{}, Conflicts: []report.Conflict{}, Quarantined: []report.Quarantined{}, Blockers: []string{}}}
		for i := range 120 {
			in := reconciler.InstanceSummary{InstanceID: "i-" + string(rune('a'+i/26)) + string(rune('a'+i%26)), PlanID: "redis-small",
				Director: "default", State: reconciler.StateOK}
			in.Deployment = "redis-small-" + in.InstanceID
			if i%3 == 0 {
				in.PlanID, in.Director, in.State = "redis-large", "east", reconciler.StateOrphaned
			}
			op.fleet = append(op.fleet, in)
		}
		op.fleet[1].Deployment = hostile
		base = op.serve()
		browser = chromium()
	})

	// shows reads the card's count, range and table once the table says want.
	shows := func(want string) (count, rng, table string) {
		GinkgoHelper()
		Eventually(func() string {
			Expect(chromedp.Run(browser, chromedp.Text("#instances tbody", &table, chromedp.ByQuery))).To(Succeed())
			return table
		}).Should(ContainSubstring(want))
		Expect(chromedp.Run(browser, chromedp.Text("#instances-count", &count, chromedp.ByQuery),
			chromedp.Text("#instances-range", &rng, chromedp.ByQuery))).To(Succeed())
		return count, rng, table
	}

	It("lists the fleet a page at a time, the server paging, a hostile deployment name as text", func() {
		Expect(chromedp.Run(browser, chromedp.Navigate(base+"/dashboard"), chromedp.WaitVisible("#instances tbody td a", chromedp.ByQuery))).To(Succeed())
		count, rng, table := shows("i-ab")
		Expect(count).To(Equal("(120)"))
		Expect(rng).To(Equal("1–50 of 120, by instance id"))
		Expect(table).To(ContainSubstring(hostile), "the deployment name shown as text")
		Expect(table).To(ContainSubstring("i-aa\tredis-small-i-aa\tredis-large\teast\torphaned"))
		var injected bool
		var href string
		Expect(chromedp.Run(browser,
			chromedp.Evaluate(`window.pwned !== undefined || document.querySelectorAll("main img, #pwned").length > 0`, &injected),
			chromedp.AttributeValue("#instances tbody td a", "href", &href, nil, chromedp.ByQuery))).To(Succeed())
		Expect(injected).To(BeFalse(), "no element made of the deployment name")
		Expect(href).To(Equal("/dashboard/instances/i-aa"))

		Expect(chromedp.Run(browser, chromedp.Click("#instances-next", chromedp.ByQuery))).To(Succeed())
		_, rng, table = shows("i-by")
		Expect(rng).To(Equal("51–100 of 120, by instance id"))
		Expect(table).NotTo(ContainSubstring("i-bx\t"), "the page after i-bx, which ended the first")
		Expect(op.listed()[len(op.listed())-1].Get("after")).To(Equal("i-bx"))

		Expect(chromedp.Run(browser, chromedp.Click("#instances-next", chromedp.ByQuery))).To(Succeed())
		_, rng, _ = shows("i-ep")
		Expect(rng).To(Equal("101–120 of 120, by instance id"))
		var nextDisabled bool
		Expect(chromedp.Run(browser, chromedp.Evaluate(`document.getElementById("instances-next").disabled`, &nextDisabled))).To(Succeed())
		Expect(nextDisabled).To(BeTrue(), "the last page")

		Expect(chromedp.Run(browser, chromedp.Click("#instances-prev", chromedp.ByQuery))).To(Succeed())
		_, rng, _ = shows("i-by")
		Expect(rng).To(Equal("51–100 of 120, by instance id"))
	})

	It("searches and filters by state, plan and Director, the server doing it", func() {
		Expect(chromedp.Run(browser, chromedp.Navigate(base+"/dashboard"), chromedp.WaitVisible("#instances tbody td a", chromedp.ByQuery))).To(Succeed())
		shows("i-aa")
		var plans string
		Expect(chromedp.Run(browser, chromedp.Text("#instances-plan", &plans, chromedp.ByQuery))).To(Succeed())
		Expect(plans).To(And(ContainSubstring("redis-large"), ContainSubstring("redis-small")), "the plans the server lists")

		Expect(chromedp.Run(browser,
			chromedp.SendKeys("#instances-q", "I-B", chromedp.ByQuery),
			chromedp.Click("#instances-search", chromedp.ByQuery))).To(Succeed())
		count, _, table := shows("i-bz")
		Expect(count).To(Equal("(26)"))
		Expect(table).NotTo(ContainSubstring("i-aa"))

		Expect(chromedp.Run(browser, chromedp.SetValue("#instances-state", "orphaned", chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("instances-state").dispatchEvent(new Event("change"))`, nil))).To(Succeed())
		Eventually(func() string {
			var c string
			Expect(chromedp.Run(browser, chromedp.Text("#instances-count", &c, chromedp.ByQuery))).To(Succeed())
			return c
		}).Should(Equal("(9)"))
		_, _, table = shows("orphaned")
		Expect(table).NotTo(ContainSubstring("\tok"))
		last := op.listed()[len(op.listed())-1]
		Expect(last.Get("q")).To(Equal("I-B"))
		Expect(last.Get("state")).To(Equal("orphaned"))
		Expect(last.Has("after")).To(BeFalse(), "a new search starts at the first page")

		Expect(chromedp.Run(browser, chromedp.SetValue("#instances-director", "default", chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("instances-director").dispatchEvent(new Event("change"))`, nil))).To(Succeed())
		shows("no instance matches")
		Expect(op.listed()[len(op.listed())-1].Get("director")).To(Equal("default"))
	})
})
