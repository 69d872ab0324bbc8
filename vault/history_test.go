package vault_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Instance history", func() {
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

			appendAll := func(id string, events ...vault.Event) {
				GinkgoHelper()
				for _, e := range events {
					Expect(store.AppendEvent(ctx, id, e)).To(Succeed())
				}
			}
			kinds := func(events []vault.Event) []string {
				out := make([]string, len(events))
				for i, e := range events {
					out[i] = e.Kind
				}
				return out
			}
			eventsOf := func(id string, limit int) []vault.Event {
				GinkgoHelper()
				events, err := store.Events(ctx, id, limit)
				Expect(err).NotTo(HaveOccurred())
				return events
			}

			It("lists events newest first, in the order appended within one second", func() {
				start := time.Now()
				var want []string
				for i := range 12 {
					kind := fmt.Sprintf("step_%c", 'a'+i)
					appendAll("h1", vault.Event{Kind: kind, Actor: "reconciler", RunID: "r1"})
					want = append([]string{kind}, want...)
				}
				events := eventsOf("h1", 0)
				Expect(kinds(events)).To(Equal(want))
				for _, e := range events {
					Expect(e.Time.Location()).To(Equal(time.UTC))
					Expect(e.Time).To(BeTemporally("~", start, 5*time.Second))
					Expect(e.Actor).To(Equal("reconciler"))
					Expect(e.RunID).To(Equal("r1"))
				}
				names := histList(srv, mount, version, "blacksmith/history/h1/")
				Expect(names).To(HaveLen(12))
				Expect(names[0]).To(MatchRegexp(`^\d{8}T\d{6}\.\d{9}Z-step_a-[0-9a-f]{4}$`))
			})

			It("orders events by their own time, not by when they were appended", func() {
				base := time.Date(2026, 11, 23, 13, 20, 0, 0, time.UTC)
				appendAll("h2",
					vault.Event{Time: base.Add(2 * time.Millisecond), Kind: "third"},
					vault.Event{Time: base, Kind: "first"},
					vault.Event{Time: base.Add(time.Millisecond).In(time.FixedZone("X", 3600)), Kind: "second"},
					vault.Event{Time: base.Add(-time.Hour), Kind: "zeroth", Deployment: "redis-h2",
						Message: "drifted", Details: map[string]string{"manifest_sha256": "abc", "old.plan": "small"}},
				)
				events := eventsOf("h2", 0)
				Expect(kinds(events)).To(Equal([]string{"third", "second", "first", "zeroth"}))
				Expect(events[1].Time).To(Equal(base.Add(time.Millisecond)), "stored in UTC")
				Expect(events[3]).To(Equal(vault.Event{Time: base.Add(-time.Hour), Kind: "zeroth", Deployment: "redis-h2",
					Message: "drifted", Details: map[string]string{"manifest_sha256": "abc", "old.plan": "small"}}))

				By("at most limit, newest first")
				Expect(kinds(eventsOf("h2", 2))).To(Equal([]string{"third", "second"}))
				Expect(kinds(eventsOf("h2", 9))).To(HaveLen(4))
				_, err := store.Events(ctx, "h2", -1)
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
			})

			It("has no events for an instance without history", func() {
				Expect(store.Events(ctx, "nobody", 0)).To(BeEmpty())
				_, found, err := store.LastEvent(ctx, "nobody", "deprovision")
				Expect(err).NotTo(HaveOccurred())
				Expect(found).To(BeFalse())
			})

			It("says when the newest event of a kind was appended, from the names alone", func() {
				t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
				appendAll("h9", vault.Event{Kind: "deprovision", Time: t0}, vault.Event{Kind: "deprovision_started", Time: t0.Add(2 * time.Hour)},
					vault.Event{Kind: "deprovision", Time: t0.Add(time.Hour)}, vault.Event{Kind: "provision", Time: t0.Add(-time.Hour)})
				at, found, err := store.LastEvent(ctx, "h9", "deprovision")
				Expect(err).NotTo(HaveOccurred())
				Expect(found).To(BeTrue())
				Expect(at).To(BeTemporally("==", t0.Add(time.Hour)), "the newest, a kind matched whole")
				_, found, err = store.LastEvent(ctx, "h9", "update")
				Expect(err).NotTo(HaveOccurred())
				Expect(found).To(BeFalse())
				_, _, err = store.LastEvent(ctx, "../x", "provision")
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
			})

			It("cuts the message and detail values at their bounds, at a character boundary", func() {
				long := strings.Repeat("é", 700) // 1,400 bytes
				appendAll("h3", vault.Event{Kind: "updated", Message: long, Details: map[string]string{"k": long}})
				e := eventsOf("h3", 1)[0]
				Expect(e.Message).To(Equal(strings.Repeat("é", 512)))
				Expect(e.Details["k"]).To(Equal(strings.Repeat("é", 128)))
			})

			It("refuses bad ids, kinds and fields before writing anything", func() {
				before := store.Stats().Writes
				many := map[string]string{}
				for i := range vault.MaxEventDetails + 1 {
					many[fmt.Sprint("k", i)] = "v"
				}
				for _, c := range []struct {
					id string
					e  vault.Event
				}{
					{"", vault.Event{Kind: "created"}},
					{"a/b", vault.Event{Kind: "created"}},
					{"..", vault.Event{Kind: "created"}},
					{" padded", vault.Event{Kind: "created"}},
					{"ctl\x01", vault.Event{Kind: "created"}},
					{"ok", vault.Event{Kind: ""}},
					{"ok", vault.Event{Kind: "Created"}},
					{"ok", vault.Event{Kind: "has-dash"}},
					{"ok", vault.Event{Kind: "../x"}},
					{"ok", vault.Event{Kind: strings.Repeat("a", 33)}},
					{"ok", vault.Event{Kind: "created", Actor: strings.Repeat("a", vault.MaxEventFieldBytes+1)}},
					{"ok", vault.Event{Kind: "created", RunID: "r\n1"}},
					{"ok", vault.Event{Kind: "created", Details: map[string]string{"a/b": "x"}}},
					{"ok", vault.Event{Kind: "created", Details: many}},
					{"ok", vault.Event{Kind: "created", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
				} {
					err := store.AppendEvent(ctx, c.id, c.e)
					Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%q %+v: %v", c.id, c.e, err)
				}
				Expect(store.Stats().Writes).To(Equal(before))
				Expect(histList(srv, mount, version, "blacksmith/")).To(BeEmpty())
				for _, id := range []string{"", "a/b"} {
					_, err := store.Events(ctx, id, 0)
					Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue())
					_, err = store.PruneEvents(ctx, id, vault.HistoryOptions{Keep: 1}, time.Now())
					Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue())
				}
			})

			It("skips a document it cannot use, naming it, and returns the others", func() {
				base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
				appendAll("h4", vault.Event{Time: base, Kind: "created"}, vault.Event{Time: base.Add(time.Second), Kind: "updated"})
				stamp := func(d time.Duration) string { return base.Add(d).Format("20060102T150405.000000000Z") }
				bad := map[string]string{
					"blacksmith/history/h4/" + stamp(time.Minute) + "-drift-00aa":     `{"time":"yesterday","kind":"drift"}`,
					"blacksmith/history/h4/" + stamp(2*time.Minute) + "-drift-00bb":   `{"time":"` + base.Add(2*time.Minute).Format(time.RFC3339Nano) + `","kind":"drift","details":{"n":5}}`,
					"blacksmith/history/h4/" + stamp(3*time.Minute) + "-drift-00cc":   `{"time":"` + base.Add(3*time.Minute).Format(time.RFC3339Nano) + `","kind":"orphaned"}`,
					"blacksmith/history/h4/" + stamp(4*time.Minute) + "-updated-00dd": `{"time":"` + base.Add(4*time.Minute).Format(time.RFC3339Nano) + `","kind":"updated","padding":"` + strings.Repeat("x", 70<<10) + `"}`,
					"blacksmith/history/h4/notes":                                     `{"text":"left by someone"}`,
				}
				for p, data := range bad {
					rawPut(srv, mount, version, p, data)
				}
				events, err := store.Events(ctx, "h4", 0)
				Expect(kinds(events)).To(Equal([]string{"updated", "created"}))
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
				var skipped *vault.SkippedError
				Expect(errors.As(err, &skipped)).To(BeTrue())
				want := []string{}
				for p := range bad {
					want = append(want, mount+"/"+p)
					Expect(err.Error()).To(ContainSubstring(mount + "/" + p))
				}
				Expect(skipped.Paths).To(ConsistOf(want))

				By("still filling the limit past the bad ones")
				events, err = store.Events(ctx, "h4", 1)
				Expect(kinds(events)).To(Equal([]string{"updated"}))
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue())

				By("pruning by names alone, leaving what is not an event's name")
				n, err := store.PruneEvents(ctx, "h4", vault.HistoryOptions{Keep: 1}, time.Now())
				Expect(err).NotTo(HaveOccurred())
				Expect(n).To(Equal(5), "every event named older than the newest name")
				Expect(histList(srv, mount, version, "blacksmith/history/h4/")).To(ConsistOf(
					stamp(4*time.Minute)+"-updated-00dd", "notes"))
			})

			It("keeps the newest Keep events and deletes them for good", func() {
				for range 6 {
					appendAll("h5", vault.Event{Kind: "updated"})
				}
				all := eventsOf("h5", 0)
				names := histList(srv, mount, version, "blacksmith/history/h5/")
				n, err := store.PruneEvents(ctx, "h5", vault.HistoryOptions{Keep: 4}, time.Now())
				Expect(err).NotTo(HaveOccurred())
				Expect(n).To(Equal(2))
				Expect(eventsOf("h5", 0)).To(Equal(all[:4]))
				for _, gone := range names[:2] { // the list is oldest first
					Expect(rawGet(srv, mount, version, "blacksmith/history/h5/"+gone).Code).To(Equal(http.StatusNotFound))
					if version == 2 {
						code, _, err := srv.Do(http.MethodGet, "/v1/"+mount+"/metadata/blacksmith/history/h5/"+gone, "")
						Expect(err).NotTo(HaveOccurred())
						Expect(code).To(Equal(http.StatusNotFound), "no version kept")
					}
				}
				Expect(store.PruneEvents(ctx, "h5", vault.HistoryOptions{Keep: 4}, time.Now())).To(Equal(0))
				Expect(store.PruneEvents(ctx, "h5", vault.HistoryOptions{}, time.Now())).To(Equal(0), "0 keeps all")
				_, err = store.PruneEvents(ctx, "h5", vault.HistoryOptions{Keep: -1}, time.Now())
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue())
			})

			It("deletes the events older than MaxAge, and by count too when both are set", func() {
				now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
				for i, age := range []time.Duration{72 * time.Hour, 25 * time.Hour, 23 * time.Hour, time.Hour, time.Minute} {
					appendAll("h6", vault.Event{Time: now.Add(-age), Kind: fmt.Sprintf("e_%c", 'a'+i)})
				}
				n, err := store.PruneEvents(ctx, "h6", vault.HistoryOptions{MaxAge: 24 * time.Hour}, now)
				Expect(err).NotTo(HaveOccurred())
				Expect(n).To(Equal(2))
				Expect(kinds(eventsOf("h6", 0))).To(Equal([]string{"e_e", "e_d", "e_c"}))

				n, err = store.PruneEvents(ctx, "h6", vault.HistoryOptions{Keep: 2, MaxAge: 24 * time.Hour}, now)
				Expect(err).NotTo(HaveOccurred())
				Expect(n).To(Equal(1))
				Expect(kinds(eventsOf("h6", 0))).To(Equal([]string{"e_e", "e_d"}))

				n, err = store.PruneEvents(ctx, "h6", vault.HistoryOptions{MaxAge: time.Second}, now.Add(time.Hour))
				Expect(err).NotTo(HaveOccurred())
				Expect(n).To(Equal(2))
				Expect(store.History.HistoryInstances(ctx)).NotTo(ContainElement("h6"), "an empty history is no folder")
			})

			It("names the instances that have a history, skipping what is not one", func() {
				for _, id := range []string{"i-2", "i-1", "with space", "ünïcode"} {
					appendAll(id, vault.Event{Kind: "created"})
				}
				Expect(store.History.HistoryInstances(ctx)).To(Equal([]string{"i-1", "i-2", "with space", "ünïcode"}))

				rawPut(srv, mount, version, "blacksmith/history/stray", `{"x":1}`)
				ids, err := store.History.HistoryInstances(ctx)
				Expect(ids).To(Equal([]string{"i-1", "i-2", "with space", "ünïcode"}))
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring(mount + "/blacksmith/history/stray"))

				Expect(store.Documents.Instances(ctx)).NotTo(HaveKey("blacksmith"), "history is not an instance")
			})
		})
	}
})

// histList lists folder straight through Vault's HTTP API, sorted as Vault
// sorts; nil when it does not exist.
func histList(srv *testvault.Server, mount string, version int, folder string) []string {
	GinkgoHelper()
	p := "/v1/" + mount + "/" + strings.TrimSuffix(folder, "/") + "?list=true"
	if version == 2 {
		p = "/v1/" + mount + "/metadata/" + strings.TrimSuffix(folder, "/") + "?list=true"
	}
	code, body, err := srv.Do(http.MethodGet, p, "")
	Expect(err).NotTo(HaveOccurred())
	if code == http.StatusNotFound {
		return nil
	}
	Expect(code).To(Equal(http.StatusOK), string(body))
	var out struct {
		Data struct {
			Keys []string `json:"keys"`
		} `json:"data"`
	}
	Expect(json.Unmarshal(body, &out)).To(Succeed())
	return out.Data.Keys
}
