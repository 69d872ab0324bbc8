package records

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// digestFmt is the fingerprint as it was first computed (fmt's %v of each
// part): the records in Vault hold fingerprints of this form, so the
// digest must never change it.
func digestFmt(w *Desired, releases []vault.Resource, vms []vault.VMSummary) string {
	h := sha256.New()
	field := func(parts ...any) {
		for _, p := range parts {
			fmt.Fprintf(h, "%v\x1f", p)
		}
		h.Write([]byte{'\x1e'})
	}
	field(fingerprintVersion, w.Match.InstanceID, w.Match.ServiceID, w.Match.PlanID, w.Deployment, w.ManifestSHA,
		w.Match.Strategy, w.Match.Confidence, w.Match.Rule)
	if w.Director != "" {
		field("director", w.Director)
	}
	for _, r := range releases {
		field(r.Name, r.Version)
	}
	h.Write([]byte{'\x1d'})
	for _, v := range vms {
		field(v.ID, v.Job, v.Index, v.AZ, v.IPs)
	}
	return hex.EncodeToString(h.Sum(nil))
}

var _ = Describe("the fingerprint", func() {
	It("is the digest of the form the records in Vault hold", func() {
		r := rand.New(rand.NewPCG(28, 1))
		word := func() string {
			return []string{"", "redis", "é ü", "a\x1fb", "[x y]", "0.9", "10.0.0.1", "z1"}[r.IntN(8)]
		}
		for i := range 500 {
			w := &Desired{Match: report.Match{InstanceID: word(), ServiceID: word(), PlanID: word(),
				Strategy: report.Strategy(word()), Rule: word(),
				Confidence: []float64{0, 0.5, 0.8, 0.9, 1, 1e21, 1e-7, 0.1 + 0.2}[r.IntN(8)]},
				Deployment: word(), ManifestSHA: word(), Director: word()}
			var releases []vault.Resource
			var vms []vault.VMSummary
			for range r.IntN(3) {
				releases = append(releases, vault.Resource{Name: word(), Version: word()})
			}
			for range r.IntN(3) {
				v := vault.VMSummary{ID: word(), Job: word(), Index: r.IntN(2000) - 1000, AZ: word()}
				for range r.IntN(3) {
					v.IPs = append(v.IPs, word())
				}
				vms = append(vms, v)
			}
			Expect(w.digest(releases, vms)).To(Equal(digestFmt(w, releases, vms)), "case %d: %+v %+v %+v", i, w, releases, vms)
		}
	})
})
