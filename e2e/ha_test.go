package e2e_test

import (
	"encoding/json"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// haStatus is what GET /b/reconcile says of the election.
type haStatus struct {
	Leader   bool   `json:"leader"`
	LeaderID string `json:"leader_id"`
}

func (d *daemon) ha() haStatus {
	GinkgoHelper()
	var st haStatus
	code, body := d.get("/b/reconcile", opUser, opPass)
	if code != http.StatusOK {
		return st
	}
	Expect(json.Unmarshal([]byte(body), &st)).To(Succeed())
	return st
}

// listings is how often the suite's simulator was asked for the deployments since its last reset.
func listings() int { return simListings(directorURL) }

func resetSim() {
	GinkgoHelper()
	res, err := http.Post(directorURL+"/_sim/reset", "application/json", nil)
	Expect(err).NotTo(HaveOccurred())
	res.Body.Close()
}

var _ = Describe("several broker VMs on one Vault (ha.enabled)", func() {
	const extra = "ha:\n  enabled: true\n  lease_ttl: 3s\n"

	It("reconcile on one daemon at a time, hand over at once on SIGTERM and within the lease after kill -9", func() {
		var ds []*daemon
		for range 3 {
			ds = append(ds, startDaemon(extra))
		}
		leading := func() []*daemon {
			var out []*daemon
			for _, d := range ds {
				if d.session.ExitCode() == -1 && d.ha().Leader {
					out = append(out, d)
				}
			}
			return out
		}
		Eventually(func() int { return len(leading()) }).WithTimeout(20 * time.Second).Should(Equal(1))
		leader := leading()[0]
		for _, d := range ds { // a follower learns who leads at its next attempt (every lease_ttl/3)
			Eventually(func() string { return d.ha().LeaderID }).WithTimeout(5*time.Second).
				Should(Equal(leader.ha().LeaderID), "every daemon names the same leader")
		}
		for _, d := range ds {
			if d != leader {
				code, body := d.do(http.MethodPost, "/b/reconcile", opUser, opPass)
				Expect(code).To(Equal(http.StatusConflict), body)
				Expect(body).To(ContainSubstring(leader.ha().LeaderID))
			}
		}

		// One listing per run of the leader only: force 3 runs on it, none elsewhere.
		resetSim()
		for range 3 {
			code, body := leader.do(http.MethodPost, "/b/reconcile?wait=60s&refresh=false", opUser, opPass)
			Expect(code).To(Equal(http.StatusOK), body)
		}
		Expect(listings()).To(Equal(3), "the followers list nothing")

		// SIGTERM: the lease is released, another daemon leads at once (well within the 3 s lease).
		stopped := time.Now()
		leader.session.Terminate().Wait(15 * time.Second)
		Eventually(func() int { return len(leading()) }).WithTimeout(5 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(1))
		Expect(time.Since(stopped)).To(BeNumerically("<", 3*time.Second+2*time.Second))
		second := leading()[0]
		Expect(second).NotTo(BeIdenticalTo(leader))

		// kill -9: nothing is released; the last one leads once the lease has run out.
		second.session.Kill().Wait(10 * time.Second)
		Eventually(func() int { return len(leading()) }).WithTimeout(3*time.Second + 5*time.Second).WithPolling(200 * time.Millisecond).Should(Equal(1))
		third := leading()[0]
		Expect(third).NotTo(BeIdenticalTo(second))
		code, body := third.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
	})
})
