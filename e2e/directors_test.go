package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// simListings is how often the simulator at url was asked for its deployments since its last reset.
func simListings(url string) int {
	GinkgoHelper()
	return simRequests(url, "GET /deployments")
}

// simRequests is how often the simulator at url answered route ("METHOD
// /path/:template") since its last reset.
func simRequests(url, route string) int {
	GinkgoHelper()
	res, err := http.Get(url + "/_sim/stats")
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	var st struct {
		Requests map[string]int `json:"requests"`
	}
	Expect(json.NewDecoder(res.Body).Decode(&st)).To(Succeed())
	return st.Requests[route]
}

// summary is what this file reads of a run's summary.
type summary struct {
	Result    string `json:"result"`
	Unknown   int    `json:"unknown"`
	Directors []struct {
		Name        string `json:"name"`
		Listed      bool   `json:"listed"`
		Deployments int    `json:"deployments"`
	} `json:"directors"`
}

var _ = Describe("several broker VMs on one Vault and several Directors (bosh as a list)", func() {
	It("list each Director once per interval (not once per daemon), match both, and orphan nothing of a Director that is down", func() {
		east, west := startSim("-seed", "3"), startSim("-seed", "4")
		w := newHAWorld(boshSection([]string{east.url, west.url}, "east", "west"))

		// 60 s at a 10 s interval, as the issue asks: each Director sees one
		// listing per interval (5 to 7), never one per daemon and interval (18).
		const interval, window = 10 * time.Second, 60 * time.Second
		const most = int(window/interval) + 1 // a run at each end of the window
		var ds []*daemon
		for range 3 {
			ds = append(ds, w.start(fmt.Sprintf("  interval: %s\n  retry_attempts: 1\n  retry_delay: 200ms\n  stop_timeout: 10s\n", interval)))
		}
		Eventually(func() int { return len(leaders(ds)) }).WithTimeout(20 * time.Second).Should(Equal(1))
		leader := leaders(ds)[0]
		started := make([]int, len(ds))
		for i, d := range ds {
			started[i] = len(runsStarted(d))
		}
		for _, s := range []*simProcess{east, west} {
			s.reset()
		}
		Consistently(func() []int { return []int{east.listings(), west.listings()} }).
			WithTimeout(window).WithPolling(time.Second).Should(HaveEach(BeNumerically("<=", most)))
		for _, s := range []*simProcess{east, west} {
			n := s.listings()
			GinkgoWriter.Printf("%s: %d listings in %s\n", s.url, n, window)
			Expect(n).To(BeNumerically(">=", most-2), "%s: one listing per interval", s.url)
		}
		Expect(leaders(ds)).To(ConsistOf(leader), "the same daemon led throughout")
		for i, d := range ds {
			runs := len(runsStarted(d)) - started[i]
			if d == leader {
				Expect(runs).To(BeNumerically("~", window/interval, 1), "the leader runs once per interval")
			} else {
				Expect(runs).To(BeZero(), "a follower runs nothing")
			}
		}

		code, body := leader.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
		var answer struct {
			Summary summary `json:"summary"`
		}
		Expect(json.Unmarshal([]byte(body), &answer)).To(Succeed())
		s := answer.Summary
		Expect(s.Directors).To(HaveLen(2), body)
		Expect(s.Directors[0].Name).To(Equal("east"))
		Expect(s.Directors[1].Name).To(Equal("west"))
		Expect(s.Directors[1].Deployments).To(Equal(4))
		westRecords := func() (n, orphaned int) {
			idx, err := w.store.Index(context.Background())
			Expect(err).NotTo(HaveOccurred())
			for _, rec := range idx.Records {
				if rec.Director == "west" {
					n++
					if rec.Orphaned {
						orphaned++
					}
				}
			}
			return n, orphaned
		}
		n, _ := westRecords()
		Expect(n).To(Equal(4), "every instance of the second Director is recorded, naming it")

		// The second Director goes away: its instances are unknown, never orphaned.
		west.session.Kill().Wait(10 * time.Second)
		code, body = leader.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(json.Unmarshal([]byte(body), &answer)).To(Succeed())
		s = answer.Summary
		Expect(s.Result).To(Equal("failure"), body)
		Expect(s.Directors[1].Listed).To(BeFalse())
		Expect(s.Unknown).To(BeNumerically(">=", 4))
		n, orphaned := westRecords()
		Expect(n).To(Equal(4))
		Expect(orphaned).To(Equal(0), "no instance of the Director that is down is flagged orphaned")
	})
})

var _ = Describe("/healthz under a crowd of anonymous probes", func() {
	It("reaches each Director at most once per interval, however many probe at once", func() {
		east, west := startSim("-seed", "3"), startSim("-seed", "4")
		w := newHAWorld(boshSection([]string{east.url, west.url}, "east", "west"))
		d := w.start("  interval: 1h\n")
		// The start-up traffic to the Directors (the connection check, the
		// first run's logins and listings) is over once that run finished.
		Eventually(func() string { return string(d.session.Err.Contents()) }).WithTimeout(30 * time.Second).
			Should(ContainSubstring(`msg="reconciler run finished"`))
		// Crowds until each Director saw one that found the last answer
		// older than the cache keeps it: then one check, never more.
		const probes = 40
		checked := map[string]bool{}
		Eventually(func(g Gomega) {
			for _, s := range []*simProcess{east, west} {
				s.reset()
			}
			codes := make([]int, probes)
			var wg sync.WaitGroup
			for i := range probes {
				wg.Go(func() { codes[i], _ = d.get("/healthz", "", "") })
			}
			wg.Wait()
			Expect(codes).To(HaveEach(http.StatusOK))
			for _, s := range []*simProcess{east, west} {
				n := simRequests(s.url, "GET /info")
				GinkgoWriter.Printf("%s: %d GET /info for %d probes\n", s.url, n, probes)
				Expect(n).To(BeNumerically("<=", 1), "%s: one check for the whole crowd", s.url)
				checked[s.url] = checked[s.url] || n == 1
			}
			g.Expect(checked).To(HaveLen(2), "each Director checked by a crowd")
		}).WithTimeout(30 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		code, _ := d.get("/livez", "", "")
		Expect(code).To(Equal(http.StatusOK))
	})
})
