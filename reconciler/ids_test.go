package reconciler_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// Ids from Director content follow the OSB id rules before anything is
// written: invisible, bidirectional and spaced ids were refused by Vault
// (run errors, quarantine, run_failed) or made records nobody could view.
var _ = Describe("ids from a Director's content", func() {
	It("are checked with the OSB id rules: a refused one is reported as unmatched with the reason, and nothing is written", func() {
		e := newEnv(envOptions{})
		hostile := map[string]string{ // deployment name -> the instance id its properties.blacksmith names
			"zwsp":    "6f1e2d3c-4b5a-4978-8a9b-0c1d2e3f4a5b\u200b",
			"linesep": "i\u20281",
			"spaced":  "my instance",
			"bidi":    "evil\u202etxt",
		}
		for name, id := range hostile {
			Expect(e.sim.PutDeployment(claimingManifest(name, fmt.Sprintf("%q", id)))).To(Succeed())
		}
		rtl := "redis-small-" + tenantID + "\u202e" // a name whose strategy-1 match is a plain UUID
		Expect(e.sim.PutDeployment(claimingManifest(fmt.Sprintf("%q", rtl), tenantID))).To(Succeed())

		for _, force := range []bool{false, true} {
			s := e.run(report.RunOptions{Force: force})
			Expect(s.Errors).To(BeEmpty(), "refused ids are no run error")
			Expect(s.NewlyQuarantined).To(BeEmpty())
			Expect(s.Conflicts).To(BeEmpty())
		}
		Expect(e.index()).To(BeEmpty(), "no record for any of them")
		st := e.m.Status()
		Expect(st.Unmatched).To(HaveLen(len(hostile) + 1))
		reasons := map[string]string{}
		for _, u := range st.Unmatched {
			reasons[u.Deployment] = u.Reason
		}
		for name, id := range hostile {
			Expect(reasons).To(HaveKeyWithValue(name, ContainSubstring(fmt.Sprintf("metadata: %q cannot be an instance id", id))))
		}
		Expect(reasons).To(HaveKeyWithValue(rtl, ContainSubstring("cannot be recorded: not made of ASCII")))
	})
})

// A shared Director's content is hostile in size too: a reason, an error or
// a status that quotes it whole was megabytes, in the log, the status every
// poll, the quarantine and the run_failed webhook.
var _ = Describe("megabytes of a Director's content", func() {
	It("are quoted by their first bytes in reasons, errors and the status", func() {
		e := newEnv(envOptions{})
		huge := strings.Repeat("\u0085<a>", 300_000) // about 1.5 MB, its quoting three times that
		Expect(e.sim.PutDeployment(claimingManifest("huge-id", strconv.Quote(huge)))).To(Succeed())

		e.run(report.RunOptions{})
		st := e.m.Status()
		Expect(st.Unmatched).NotTo(BeEmpty())
		for _, u := range st.Unmatched {
			Expect(len(u.Reason)+len(u.Deployment)).To(BeNumerically("<=", 2200), "an unmatched deployment")
		}
		data, err := json.Marshal(st)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(data)).To(BeNumerically("<", 64<<10), "the whole status")
		Expect(e.index()).To(BeEmpty())
	})
})
