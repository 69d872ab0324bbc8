package redeploy_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/redeploy"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// renderer renders "rendered for PLAN", or fails.
type renderer struct{ err error }

func (r renderer) RenderManifest(_ context.Context, _ string, rec *vault.Record) (string, error) {
	return "rendered for " + rec.PlanID, r.err
}

func (r renderer) RenderHeld(ctx context.Context, id string, rec *vault.Record) (string, error) {
	return r.RenderManifest(ctx, id, rec)
}

func sha(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

var _ = Describe("what a redeploy deploys", func() {
	owned := &vault.Record{PlanID: "p1"}
	adopted := &vault.Record{PlanID: "p1", Adopted: true}
	drifts := map[string]bool{sha("drifted"): true}

	DescribeTable("the broker's rendering for an owned record, else a kept manifest never recorded as drift",
		func(r ports.Renderer, rec *vault.Record, stored string, ok bool, want string, refused bool) {
			got, _, err := redeploy.Source{Renderer: r, Drifts: drifts}.Manifest(context.Background(), "i1", rec, stored, ok, "the kept manifest")
			if refused {
				Expect(err).To(MatchError(redeploy.ErrRefused))
				return
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want))
		},
		Entry("owned: rendered, whatever is kept", renderer{}, owned, "drifted", true, "rendered for p1", false),
		Entry("owned, the rendering fails: refused", renderer{err: errors.New("no template")}, owned, "original", true, "", true),
		Entry("adopted: the kept manifest", renderer{}, adopted, "original", true, "original", false),
		Entry("adopted, the kept manifest is a drift: refused", renderer{}, adopted, "drifted", true, "", true),
		Entry("no renderer: the kept manifest", nil, owned, "original", true, "original", false),
		Entry("no renderer, a drift: refused", nil, owned, "drifted", true, "", true),
		Entry("nothing kept: refused", nil, adopted, "", false, "", true),
	)

	It("knows the drifts from the metadata's history and the history's events", func() {
		md := &vault.Metadata{History: []vault.HistoryEntry{{Action: "created", ManifestSHA256: "a"}, {Action: "drift", ManifestSHA256: "b"}}}
		events := []vault.Event{{Kind: "drift", Details: map[string]string{"manifest_sha256": "c"}},
			{Kind: "updated", Details: map[string]string{"manifest_sha256": "d"}}}
		Expect(redeploy.Drifts(md, events)).To(Equal(map[string]bool{"b": true, "c": true}))
		Expect(redeploy.Drifts(nil, nil)).To(BeEmpty())
	})
})
