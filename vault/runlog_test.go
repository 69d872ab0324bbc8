package vault_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Run log", func() {
	for _, version := range []int{1, 2} {
		Context(fmt.Sprintf("on KV v%d", version), func() {
			var (
				srv   *testvault.Server
				store *vault.Store
				mount string
			)
			BeforeEach(func() {
				srv = server()
				store, mount = newStore(srv, version)
			})

			ids := func(runs []vault.RunEntry) []string {
				out := make([]string, len(runs))
				for i, r := range runs {
					out[i] = r.ID
				}
				return out
			}
			runsOf := func(limit int) []vault.RunEntry {
				GinkgoHelper()
				runs, err := store.RunLog.Runs(ctx, limit)
				Expect(err).NotTo(HaveOccurred())
				return runs
			}
			base := time.Date(2026, 11, 23, 13, 20, 0, 0, time.UTC)

			It("keeps runs with their summaries, newest first", func() {
				Expect(runsOf(0)).To(BeEmpty())
				for _, r := range []vault.RunEntry{
					{ID: "b2", StartedAt: base.Add(2 * time.Second), Summary: json.RawMessage(`{"changed": 2}`)},
					{ID: "a1", StartedAt: base, Summary: json.RawMessage(`{"changed":1,"errors":["x <&> y"]}`)},
					{ID: "c3-same-second", StartedAt: base.Add(2*time.Second + time.Millisecond)},
				} {
					Expect(store.RunLog.AppendRun(ctx, r)).To(Succeed())
				}
				Expect(store.RunLog.AppendRun(ctx, vault.RunEntry{ID: "d4", Summary: json.RawMessage(`{}`)})).To(Succeed())

				runs := runsOf(0)
				Expect(ids(runs)).To(Equal([]string{"d4", "c3-same-second", "b2", "a1"}))
				Expect(runs[0].StartedAt).To(BeTemporally("~", time.Now(), 5*time.Second))
				Expect(runs[1].StartedAt).To(Equal(base.Add(2*time.Second + time.Millisecond)))
				Expect(string(runs[1].Summary)).To(Equal("null"))
				Expect(runs[2].Summary).To(MatchJSON(`{"changed":2}`))
				Expect(runs[3].Summary).To(MatchJSON(`{"changed":1,"errors":["x <&> y"]}`))
				Expect(ids(runsOf(2))).To(Equal([]string{"d4", "c3-same-second"}))
				Expect(histList(srv, mount, version, "blacksmith/runs/")).To(ContainElement(
					"20261123T132000.000000000Z-a1"))

				By("appending the same run again replaces its entry")
				Expect(store.RunLog.AppendRun(ctx, vault.RunEntry{ID: "a1", StartedAt: base, Summary: json.RawMessage(`{"changed":9}`)})).To(Succeed())
				runs = runsOf(0)
				Expect(runs).To(HaveLen(4))
				Expect(runs[3].Summary).To(MatchJSON(`{"changed":9}`))
			})

			It("prunes all but the newest keep", func() {
				for i := range 5 {
					Expect(store.RunLog.AppendRun(ctx, vault.RunEntry{ID: fmt.Sprint("r", i), StartedAt: base.Add(time.Duration(i) * time.Minute)})).To(Succeed())
				}
				Expect(store.RunLog.PruneRuns(ctx, 0)).To(Equal(0), "0 keeps all")
				Expect(runsOf(0)).To(HaveLen(5))
				Expect(store.RunLog.PruneRuns(ctx, 2)).To(Equal(3))
				Expect(ids(runsOf(0))).To(Equal([]string{"r4", "r3"}))
				Expect(histList(srv, mount, version, "blacksmith/runs/")).To(HaveLen(2))
				Expect(store.RunLog.PruneRuns(ctx, 2)).To(Equal(0))
				_, err := store.RunLog.PruneRuns(ctx, -1)
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue())
			})

			It("refuses a bad run id, a summary that is not JSON or too large, writing nothing", func() {
				before := store.Stats().Writes
				for _, id := range []string{"", "a/b", "../x", "has space", "dot.ted", strings.Repeat("r", 65)} {
					err := store.RunLog.AppendRun(ctx, vault.RunEntry{ID: id})
					Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%q: %v", id, err)
				}
				err := store.RunLog.AppendRun(ctx, vault.RunEntry{ID: "r1", Summary: json.RawMessage(`{"broken`)})
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)

				big := json.RawMessage(`"` + strings.Repeat("x", vault.MaxRunSummaryBytes) + `"`)
				err = store.RunLog.AppendRun(ctx, vault.RunEntry{ID: "r1", Summary: big})
				Expect(errors.Is(err, vault.ErrTooLarge)).To(BeTrue(), "%v", err)
				Expect(store.Stats().Writes).To(Equal(before))
				Expect(histList(srv, mount, version, "blacksmith/")).To(BeEmpty())

				By("a summary just within the bound is kept")
				fits := json.RawMessage(`"` + strings.Repeat("x", vault.MaxRunSummaryBytes-2) + `"`)
				Expect(store.RunLog.AppendRun(ctx, vault.RunEntry{ID: "r1", Summary: fits})).To(Succeed())
				Expect(runsOf(1)[0].Summary).To(HaveLen(vault.MaxRunSummaryBytes))
			})

			It("skips a run document it cannot use, naming it", func() {
				Expect(store.RunLog.AppendRun(ctx, vault.RunEntry{ID: "good", StartedAt: base})).To(Succeed())
				at := base.Add(time.Hour).Format(time.RFC3339Nano)
				bad := map[string]string{
					"blacksmith/runs/20261123T142000.000000000Z-other": `{"run_id":"someone-else","started_at":"` + at + `"}`,
					"blacksmith/runs/20261123T152000.000000000Z-late":  `{"run_id":"late","started_at":5}`,
					"blacksmith/runs/garbage":                          `{"run_id":"garbage"}`,
				}
				for p, data := range bad {
					rawPut(srv, mount, version, p, data)
				}
				runs, err := store.RunLog.Runs(ctx, 0)
				Expect(ids(runs)).To(Equal([]string{"good"}))
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
				for p := range bad {
					Expect(err.Error()).To(ContainSubstring(mount + "/" + p))
				}
			})
		})
	}
})
