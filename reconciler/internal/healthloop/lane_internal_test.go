package healthloop

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("a Director's lane", func() {
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("d%d", i)
		}
		return out
	}
	drain := func(ln *lane, now time.Time) []string {
		var out []string
		for {
			name, ok := ln.next(now)
			if !ok {
				return out
			}
			out = append(out, name)
		}
	}

	It("spreads a slot's share evenly until the slot ends: one due at each pace", func() {
		ln := newLane(Director{Name: "east"})
		ln.reslot(0, names(6), t0, t0.Add(time.Hour))
		Expect(ln.pace).To(Equal(10 * time.Minute))
		Expect(drain(ln, t0)).To(Equal([]string{"d0"}), "only the first is due at the start")
		Expect(drain(ln, t0.Add(9*time.Minute))).To(BeEmpty())
		Expect(drain(ln, t0.Add(10*time.Minute))).To(Equal([]string{"d1"}))
		Expect(drain(ln, t0.Add(35*time.Minute))).To(Equal([]string{"d2", "d3"}), "a lane behind catches up")
		Expect(ln.due(t0.Add(35 * time.Minute))).To(BeFalse())
	})

	It("asks first what is named before the sweep, once, and moves a queued sweep item to the front", func() {
		ln := newLane(Director{Name: "east"})
		ln.reslot(0, names(4), t0, t0.Add(time.Hour))
		ln.ask("d3")
		ln.ask("d3")
		ln.ask("x")
		Expect(drain(ln, t0)).To(Equal([]string{"d3", "x", "d0"}), "the named first, each once, then the sweep's due one")
		Expect(ln.sweep).To(Equal([]string{"d1", "d2"}))
	})

	It("carries what a slot left to the next, and does not sweep again what this slot swept when a handover re-spreads it", func() {
		ln := newLane(Director{Name: "east"})
		ln.reslot(0, names(4), t0, t0.Add(time.Hour))
		Expect(drain(ln, t0)).To(Equal([]string{"d0"}))
		ln.reslot(0, names(5), t0.Add(30*time.Minute), t0.Add(time.Hour)) // a new handover brings d4
		Expect(ln.sweep).To(Equal([]string{"d1", "d2", "d3", "d4"}), "d0 was swept in this slot")
		Expect(ln.pace).To(Equal(30 * time.Minute / 4))
		ln.reslot(1, []string{"e0", "d1"}, t0.Add(time.Hour), t0.Add(2*time.Hour))
		Expect(ln.sweep).To(Equal([]string{"d1", "d2", "d3", "d4", "e0"}), "the last slot's rest first, each once")
	})

	It("re-spreads a handover within the slot from when the next was due, so that frequent handovers add no task", func() {
		ln := newLane(Director{Name: "east"})
		ln.reslot(0, names(4), t0, t0.Add(time.Hour))
		Expect(drain(ln, t0)).To(Equal([]string{"d0"}))
		for m := 1; m <= 10; m++ { // a handover a minute (the watch's runs)
			now := t0.Add(time.Duration(m) * time.Minute)
			ln.reslot(0, names(4), now, t0.Add(time.Hour))
			Expect(drain(ln, now)).To(BeEmpty(), "minute %d: the next is due at 15 min", m)
		}
		Expect(drain(ln, t0.Add(15*time.Minute))).To(Equal([]string{"d1"}))
	})

	It("forgets what is no longer handed, and keeps the pending within its bound", func() {
		ln := newLane(Director{Name: "east"})
		ln.reslot(0, names(3), t0, t0.Add(time.Hour))
		ln.ask("gone")
		ln.later = []string{"d1", "gone"}
		ln.forget(func(name string) bool { return name != "gone" })
		Expect(ln.first).To(BeEmpty())
		Expect(ln.later).To(Equal([]string{"d1"}))
		Expect(ln.queued).NotTo(HaveKey("gone"))
		for i := range 3000 {
			ln.ask(fmt.Sprintf("n%d", i))
		}
		Expect(len(ln.first)).To(Equal(2000), "health.MaxPending: the sweep comes to the rest")
	})
})

var _ = Describe("a check that ends after the daemon stopped leading", func() {
	It("is dropped: the keep started again, nothing is observed (it panicked on the keep's reset map)", func() {
		leading := true
		l := New(Options{Directors: []Director{{Name: "d"}}, Tracker: &health.Tracker{}, Leading: func() bool { return leading },
			Now: time.Now, Log: slog.New(slog.DiscardHandler)})
		l.keep.loaded, l.keep.dirOf = true, map[string]string{}
		l.handed = health.Handover{Targets: map[string]health.Target{"dep": {Instance: "i", Director: "d"}}}
		l.lanes["d"].inFlight["dep"] = true
		leading = false
		l.step(context.Background(), nil, &sync.WaitGroup{}) // the keep and the lanes start again
		Expect(l.keep.loaded).To(BeFalse())
		Expect(func() { l.took(result{director: "d", name: "dep"}) }).NotTo(Panic())
		Expect(l.keep.obs).To(BeEmpty())
		Expect(l.Status().Leading).To(BeFalse())
	})
})
