package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// runLog is the ids of the run log, newest first.
func runLog() []string {
	GinkgoHelper()
	runs, err := store.RunLog.Runs(context.Background(), 0)
	Expect(err).NotTo(HaveOccurred())
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// haReply is the answer of a request.
type haReply struct {
	code int
	body string
}

// upgradeRelease changes the release version in the manifest of the
// deployment seedDeployment made for instance id.
func upgradeRelease(id string) {
	GinkgoHelper()
	code, body := director("/deployments/redis-small-" + id)
	Expect(code).To(Equal(http.StatusOK), body)
	var dep struct {
		Manifest string `json:"manifest"`
	}
	Expect(json.Unmarshal([]byte(body), &dep)).To(Succeed())
	manifest := strings.Replace(dep.Manifest, `version: "16.1.0"`, `version: "16.2.0"`, 1)
	Expect(manifest).NotTo(Equal(dep.Manifest))
	simDeployment(manifest)
}

// The leader is paused in the middle of a run; another daemon takes the
// lease and runs; the Director changes; the old leader wakes up, sees the
// change and must write nothing. Without the fence (reconciler/leader.go)
// this fails: the woken run writes the change (manifest, metadata, backup,
// history event, index shard), the event feed's mark and its own run log entry.
var _ = Describe("several broker VMs on one Vault, the leader paused (SIGSTOP)", func() {
	It("a paused leader writes nothing after losing its lease", func() {
		const ttl = 3 * time.Second
		ctx := context.Background()
		var ds []*daemon
		for range 3 {
			ds = append(ds, startDaemon("ha:\n  enabled: true\n  lease_ttl: 3s\n"))
		}
		Eventually(func() int { return len(leaders(ds)) }).WithTimeout(20 * time.Second).Should(Equal(1))
		old := leaders(ds)[0]
		code, body := old.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body) // its run on becoming the leader is over too

		// A deployment the next run adopts (index record, metadata, manifest,
		// history), and a listing that answers 6 s late: the leader is
		// paused in the middle of its run, the index read, the listing on its way.
		first := seedDeployment()
		resetSim()
		DeferCleanup(simAdmin, http.MethodPost, "/_sim/config", map[string]any{"failures": []any{}})
		simAdmin(http.MethodPost, "/_sim/config", map[string]any{"failures": []map[string]any{
			{"endpoint": "/deployments", "method": "GET", "delay_ms": 6000, "count": 1}}})
		answered := make(chan haReply, 1)
		go func() {
			defer GinkgoRecover()
			code, body := old.do(http.MethodPost, "/b/reconcile?wait=120s", opUser, opPass)
			answered <- haReply{code, body}
		}()
		Eventually(listings).WithTimeout(20 * time.Second).WithPolling(10 * time.Millisecond).Should(Equal(1))
		old.session.Signal(syscall.SIGSTOP)
		paused := time.Now()
		DeferCleanup(func() { old.session.Signal(syscall.SIGCONT) })
		startedBefore := runsStarted(old)

		// Another daemon takes the lease once it runs out, and runs.
		others := without(ds, old)
		Eventually(func() int { return len(leaders(others)) }).WithTimeout(ttl + 5*time.Second).
			WithPolling(100 * time.Millisecond).Should(Equal(1))
		fresh := leaders(others)[0]
		GinkgoWriter.Printf("new leader after %s\n", time.Since(paused))
		second := seedDeployment()
		code, body = fresh.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
		for _, id := range []string{first, second} {
			rec, err := store.Record(ctx, id)
			Expect(err).NotTo(HaveOccurred())
			Expect(rec).NotTo(BeNil(), "the new leader adopted %s", id)
		}
		vaultThen, logThen := vaultVersions(), runLog()

		// Meanwhile the Director changes: the old leader's run sees it, and
		// would write it.
		upgradeRelease(second)

		// The old leader wakes up: its run goes on with the listing, and stops
		// at its first write, which it may no longer make.
		old.session.Signal(syscall.SIGCONT)
		var r haReply
		Eventually(answered).WithTimeout(30 * time.Second).Should(Receive(&r))
		Expect(r.code).To(Equal(http.StatusOK), r.body)
		var run struct {
			Summary struct {
				RunID  string   `json:"run_id"`
				Seen   int      `json:"deployments_seen"`
				Writes int      `json:"writes"`
				Errors []string `json:"errors"`
			} `json:"summary"`
		}
		Expect(json.Unmarshal([]byte(r.body), &run)).To(Succeed())
		s := run.Summary

		// Through more of its lease attempts (one a second) it is a follower
		// that starts no run, and Vault is as the new leader left it.
		Consistently(func() bool { return old.ha().Leader }).WithTimeout(3 * time.Second).
			WithPolling(200 * time.Millisecond).Should(BeFalse())
		Expect(vaultChanges(vaultThen, vaultVersions())).To(BeEmpty(), "documents written since the new leader's run")
		Expect(runLog()).To(Equal(logThen), "no run of the paused daemon in the run log")
		Expect(old.ha().LeaderID).To(Equal(fresh.ha().LeaderID))
		Expect(runsStarted(old)).To(Equal(startedBefore), "no run started after the pause")

		// Its run was the one paused, went on after the pause, and stopped at
		// its first write, saying why.
		Expect(startedBefore).NotTo(BeEmpty())
		Expect(startedBefore[len(startedBefore)-1]).To(Equal(s.RunID), "the run paused is the one asked for")
		Expect(s.Seen).To(BeNumerically(">", 0), "the run went on after the pause: %s", r.body)
		Expect(s.Errors).To(ContainElement("the reconciler lease was lost"), r.body)
		Expect(s.Writes).To(BeZero(), r.body)
		Expect(string(old.session.Err.Contents())).To(And(
			MatchRegexp(`msg="reconciler run aborted"[^\n]* run=%s [^\n]*error="the reconciler lease was lost"`, regexp.QuoteMeta(s.RunID)),
			ContainSubstring(`msg="this daemon no longer leads the reconciler"`)))

		// The change it saw was there to write: the new leader writes it.
		code, body = fresh.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(decode(body)["summary"]).To(HaveKeyWithValue("writes", BeNumerically(">", 0)))
		Expect(vaultChanges(vaultThen, vaultVersions())).To(ContainElement(ContainSubstring(second)))
	})
})
