package match

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// claimCase is a run's claims on instance uuid1: the deployments listed
// (in listing order), the one its index record names ("" for none) and
// whether that record is owned (the broker's) rather than an adoption not
// yet confirmed, the claimants in the order their fetches finish, and who
// must win ("" for nobody).
type claimCase struct {
	listed   []string
	recorded string
	owned    bool
	claims   []string
	verdicts []Verdict
	winner   string // after Settle
	losers   []string
	kept     bool
}

var _ = Describe("the claims of a run", func() {
	var m *Matcher
	BeforeEach(func() {
		var err error
		m, err = New(testCatalog, config.ReconcilerConfig{})
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("give an instance to one deployment whatever order the fetches finish in",
		func(c claimCase) {
			index := map[string]*vault.Record{}
			if c.recorded != "" {
				index[uuid1] = &vault.Record{DeploymentName: c.recorded, Adopted: !c.owned}
			}
			var deps []bosh.Deployment
			for _, name := range c.listed {
				deps = append(deps, bosh.Deployment{Name: name})
			}
			cl := NewClaims[string](index, deps)
			cl.Preclaim(m, deps)
			var got []Verdict
			for _, name := range c.claims {
				cl.Seen(name)
				v, _ := cl.Claim(uuid1, name, "found "+name)
				got = append(got, v)
			}
			Expect(got).To(Equal(c.verdicts))
			won, lost := cl.Settle()
			var losers []string
			for _, l := range lost {
				Expect(l.Winner).To(Equal(c.winner))
				Expect(l.Kept).To(Equal(c.kept))
				losers = append(losers, l.Loser)
			}
			Expect(losers).To(Equal(c.losers))
			for _, w := range won {
				Expect(w.Deployment).To(Equal(c.winner), "a held claimant went on")
				Expect(w.Value).To(Equal("found "+c.winner), "with what was found of it")
			}
			Expect(cl.IsClaimed(uuid1)).To(Equal(c.winner != ""), "claimed, or left for the orphaner")
		},
		Entry("the name {planID}-{instanceID} wins over a copy that finishes first", claimCase{
			listed: []string{"copy-of-it", "redis-small-" + uuid1}, claims: []string{"copy-of-it", "redis-small-" + uuid1},
			verdicts: []Verdict{Taken, Won}, winner: "redis-small-" + uuid1,
		}),
		Entry("the first listed of two names for one instance", claimCase{
			listed: []string{"redis-large-" + uuid1, "redis-small-" + uuid1}, claims: []string{"redis-small-" + uuid1},
			verdicts: []Verdict{Taken}, winner: "redis-large-" + uuid1,
		}),
		Entry("the deployment the index record names, as soon as it is matched", claimCase{
			listed: []string{"a-one", "z-recorded"}, recorded: "z-recorded", claims: []string{"z-recorded", "a-one"},
			verdicts: []Verdict{Won, Taken}, winner: "z-recorded",
		}),
		Entry("the index record's deployment even when another finishes first", claimCase{
			listed: []string{"a-one", "z-recorded"}, recorded: "z-recorded", claims: []string{"a-one", "z-recorded"},
			verdicts: []Verdict{Waiting, Won}, winner: "z-recorded", losers: []string{"a-one"},
		}),
		Entry("else the claimant whose name sorts first, once all are observed", claimCase{
			listed: []string{"c", "a", "b"}, claims: []string{"c", "b", "a"},
			verdicts: []Verdict{Waiting, Waiting, Waiting}, winner: "a", losers: []string{"b", "c"},
		}),
		Entry("a recorded deployment that is listed but was skipped keeps it: nobody wins", claimCase{
			listed: []string{"a", "b", "locked"}, recorded: "locked", claims: []string{"b", "a"},
			verdicts: []Verdict{Waiting, Waiting}, winner: "locked", losers: []string{"a", "b"}, kept: true,
		}),
		Entry("an adoption's recorded deployment that is gone gives no right", claimCase{
			listed: []string{"b", "a"}, recorded: "gone", claims: []string{"b", "a"},
			verdicts: []Verdict{Waiting, Waiting}, winner: "a", losers: []string{"b"},
		}),
		Entry("an owned record keeps its deployment against every other claimant", claimCase{
			listed: []string{"a-copy", "mine"}, recorded: "mine", owned: true, claims: []string{"a-copy", "mine"},
			verdicts: []Verdict{Owned, Won}, winner: "mine",
		}),
		Entry("an owned record keeps its deployment against the name {planID}-{instanceID}", claimCase{
			listed: []string{"redis-small-" + uuid1, "custom-name"}, recorded: "custom-name", owned: true,
			claims: []string{"redis-small-" + uuid1, "custom-name"}, verdicts: []Verdict{Owned, Won}, winner: "custom-name",
		}),
		Entry("an owned record whose deployment is gone: nobody takes it (it is an orphan)", claimCase{
			listed: []string{"zzz-attacker", "redis-small-" + uuid1}, recorded: "gone", owned: true,
			claims: []string{"zzz-attacker", "redis-small-" + uuid1}, verdicts: []Verdict{Owned, Owned},
		}),
	)

	It("tells the deployment that holds an instance already", func() {
		cl := NewClaims[int](nil, nil)
		Expect(cl.IsClaimed(uuid1)).To(BeFalse())
		cl.Preclaim(m, []bosh.Deployment{{Name: "redis-small-" + uuid1}})
		v, other := cl.Claim(uuid1, "another", 0)
		Expect(v).To(Equal(Taken))
		Expect(other).To(Equal("redis-small-" + uuid1))
	})
})
