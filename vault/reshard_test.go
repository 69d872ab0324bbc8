package vault_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// TestMain lets this test binary be the process a spec kills in the middle
// of a re-shard (reshardChild).
func TestMain(m *testing.M) {
	if os.Getenv("BLACKSMITH_RESHARD_CHILD") != "" {
		os.Exit(reshardChild())
	}
	os.Exit(m.Run())
}

// reshardChild re-shards the index named by its environment and kills
// itself with SIGKILL after step BLACKSMITH_RESHARD_KILL_AT (0: never); it
// prints the number of steps it wrote.
func reshardChild() int {
	env := os.Getenv
	killAt, _ := strconv.Atoi(env("BLACKSMITH_RESHARD_KILL_AT"))
	to, _ := strconv.Atoi(env("BLACKSMITH_RESHARD_TO"))
	pauseAt := env("BLACKSMITH_RESHARD_PAUSE_AT")
	var steps atomic.Int64
	vault.SetReshardStep(func(step string) {
		if n := steps.Add(1); killAt > 0 && n == int64(killAt) {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
		if step == pauseAt { // until the spec says go on
			fmt.Println("paused")
			_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		}
	})
	s, err := vault.New(context.Background(), vault.Options{Address: env("VAULT_ADDR"), Token: env("VAULT_TOKEN"), Mount: env("BLACKSMITH_RESHARD_MOUNT")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, err := s.Indexes.Reshard(context.Background(), to); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("steps=%d\n", steps.Load())
	return 0
}

var _ = Describe("re-sharding the index", func() {
	// seedLayout makes the index of a fresh mount n shards (a layout
	// document as Reshard leaves it), so that specs move few shards.
	seedLayout := func(srv *testvault.Server, mount string, version, n int) {
		GinkgoHelper()
		body := fmt.Sprintf(`{"layout_version":1,"shards":%d,"hash":"sha256-be32"}`, n)
		if version == 2 {
			body = `{"data":` + body + `}`
		}
		code, out, err := srv.Do(http.MethodPut, "/v1/"+mount+map[int]string{1: "/", 2: "/data/"}[version]+"blacksmith/index/meta", body)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(BeNumerically("<", 300), string(out))
	}
	record := func(id string, gen int) vault.Change {
		return func(*vault.Record) (*vault.Record, error) {
			return &vault.Record{ServiceID: "redis", PlanID: "p" + strconv.Itoa(gen), DeploymentName: "p-" + id}, nil
		}
	}
	seed := func(s *vault.Store, n int) map[string]string {
		GinkgoHelper()
		want := map[string]string{}
		changes := map[string]vault.Change{}
		for i := range n {
			id := fmt.Sprintf("inst-%04d", i)
			changes[id], want[id] = record(id, 0), "p0"
		}
		_, err := s.Update(context.Background(), changes)
		Expect(err).NotTo(HaveOccurred())
		return want
	}
	// writeAlong starts writers that update the record idOf names, one
	// generation after another, until the stop it returns is called (which
	// waits for them); each update written is passed to done. One lock
	// orders the writers' updates and done, so that done sees them in the
	// order Vault took them.
	writeAlong := func(ctx context.Context, writer *vault.Store, writers int, idOf func(w, gen int) string,
		done func(id, plan string)) (stop func()) {
		var (
			mu   sync.Mutex
			quit = make(chan struct{})
			wg   sync.WaitGroup
		)
		for w := range writers {
			wg.Go(func() {
				defer GinkgoRecover()
				for gen := 1; ; gen++ {
					select {
					case <-quit:
						return
					default:
					}
					id := idOf(w, gen)
					mu.Lock()
					_, err := writer.Update(ctx, map[string]vault.Change{id: record(id, gen)})
					if err == nil {
						done(id, "p"+strconv.Itoa(gen))
					}
					mu.Unlock()
					Expect(err).NotTo(HaveOccurred())
				}
			})
		}
		return func() { close(quit); wg.Wait() }
	}
	// fresh is a new mount of KV version v whose index has 8 shards and
	// records records: its mount, a Store on it, and the records' plans.
	fresh := func(srv *testvault.Server, v, records int) (string, *vault.Store, map[string]string) {
		GinkgoHelper()
		m := newMount(srv, v)
		seedLayout(srv, m, v, 8)
		s := openStore(srv.Addr, srv.Token, m)
		return m, s, seed(s, records)
	}
	holds := func(s *vault.Store, want map[string]string) {
		GinkgoHelper()
		idx, err := s.Index(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(idx.Problems).To(BeEmpty())
		got := map[string]string{}
		for id, r := range idx.Records {
			got[id] = r.PlanID
		}
		Expect(got).To(Equal(want))
		for id, plan := range want {
			r, err := s.Record(context.Background(), id)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.PlanID).To(Equal(plan), id)
		}
	}
	layout := func(srv *testvault.Server, mount string) map[string]any {
		GinkgoHelper()
		code, out, err := srv.Do(http.MethodGet, "/v1/"+mount+"/data/blacksmith/index/meta", "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK))
		var doc struct {
			Data struct {
				Data map[string]any `json:"data"`
			} `json:"data"`
		}
		Expect(json.Unmarshal(out, &doc)).To(Succeed())
		return doc.Data.Data
	}

	It("says how many shards an index should have", func() {
		Expect(vault.ShardsFor(128, 10_000)).To(Equal(128), "78 a shard: as it is")
		Expect(vault.ShardsFor(128, 128*vault.ReshardAbove)).To(Equal(128))
		Expect(vault.ShardsFor(128, 100_000)).To(Equal(2048), "49 a shard")
		Expect(vault.ShardsFor(128, 10_000_000)).To(Equal(4096), "at most 4096")
		Expect(vault.ShardsFor(1024, 100_000)).To(Equal(1024), "97 a shard: under ReshardAbove, as it is")
	})

	for _, version := range []int{1, 2} {
		It(fmt.Sprintf("moves every record to the new shards and records it (KV v%d)", version), func(ctx SpecContext) {
			srv := server()
			_, s, want := fresh(srv, version, 600)

			rep, err := s.Indexes.Reshard(ctx, 32)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep).To(MatchFields(IgnoreExtras, Fields{"From": Equal(8), "To": Equal(32), "Moved": Equal(8), "Records": Equal(600)}))
			holds(s, want)

			again, err := s.Indexes.Reshard(ctx, 32)
			Expect(err).NotTo(HaveOccurred())
			Expect(again.AlreadyDone).To(BeTrue())
			Expect(again.Writes).To(BeZero())

			_, err = s.Indexes.Reshard(ctx, 48)
			Expect(err).To(MatchError(vault.ErrInvalid), "not a power-of-two multiple")

			// updates and removals after the re-shard write the new shards
			_, err = s.Update(ctx, map[string]vault.Change{"inst-0001": record("inst-0001", 1), "new-1": record("new-1", 1)})
			Expect(err).NotTo(HaveOccurred())
			Expect(s.Indexes.Remove(ctx, "inst-0002")).To(Succeed())
			want["inst-0001"], want["new-1"] = "p1", "p1"
			delete(want, "inst-0002")
			holds(s, want)
		})
	}

	for _, version := range []int{1, 2} {
		It(fmt.Sprintf("creates a new index's layout, then grows it while it is empty (KV v%d)", version), func(ctx SpecContext) {
			srv := server()
			m := newMount(srv, version)
			s := openStore(srv.Addr, srv.Token, m)

			rep, err := s.Indexes.Reshard(ctx, 2*vault.DefaultShards)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep).To(MatchFields(IgnoreExtras, Fields{"From": Equal(vault.DefaultShards), "To": Equal(2 * vault.DefaultShards),
				"Moved": Equal(vault.DefaultShards), "Records": BeZero()}))
			Expect(rep.Writes).To(Equal(1+vault.DefaultShards+2), "the layout created, a marker each, the layout twice")
			idx, err := s.Index(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(idx.Shards).To(Equal(2 * vault.DefaultShards))
			Expect(idx.Records).To(BeEmpty())

			want := seed(s, 300)
			holds(s, want)
			again, err := s.Indexes.Reshard(ctx, 2*vault.DefaultShards)
			Expect(err).NotTo(HaveOccurred())
			Expect(again.AlreadyDone).To(BeTrue())
		})
	}

	It("keeps the layout's history and refuses a damaged marker", func(ctx SpecContext) {
		srv := server()
		m, s, _ := fresh(srv, 2, 50)
		_, err := s.Indexes.Reshard(ctx, 16)
		Expect(err).NotTo(HaveOccurred())
		l := layout(srv, m)
		Expect(l["shards"]).To(BeNumerically("==", 16))
		Expect(l).NotTo(HaveKey("reshard"))
		Expect(l["resharded"]).To(ConsistOf(And(HaveKeyWithValue("from", BeNumerically("==", 8)), HaveKeyWithValue("to", BeNumerically("==", 16)))))

		code, out, err := srv.Do(http.MethodPut, "/v1/"+m+"/data/blacksmith/index/v1/shards-8/0003", `{"data":{"blacksmith/moved_to":12}}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), string(out))
		seedLayout(srv, m, 2, 8) // as if the layout were put back by hand
		_, err = s.Index(ctx)
		Expect(err).To(MatchError(vault.ErrCorrupt))
		Expect(err.Error()).To(ContainSubstring("shards-8/0003"))
	})

	It("loses no update of writers that go on during the re-shard (KV v2)", func(ctx SpecContext) {
		srv := server()
		m, s, want := fresh(srv, 2, 400)
		writer := openStore(srv.Addr, srv.Token, m) // another broker VM
		written := map[string]string{}
		var updates atomic.Int64 // updates written
		stop := writeAlong(ctx, writer, 3, func(w, gen int) string {
			if gen%5 == 0 {
				return fmt.Sprintf("w%d-%d", w, gen)
			}
			return fmt.Sprintf("inst-%04d", (gen*7+w*131)%400)
		}, func(id, plan string) { written[id] = plan; updates.Add(1) })
		Eventually(updates.Load).WithTimeout(30*time.Second).Should(BeNumerically(">=", 10), "the writers write before the re-shard")
		_, err := s.Indexes.Reshard(ctx, 64)
		Expect(err).NotTo(HaveOccurred())
		resharded := updates.Load()
		Eventually(func() int64 { return updates.Load() - resharded }).WithTimeout(30*time.Second).
			Should(BeNumerically(">=", 10), "the writers write on after the re-shard")
		stop()
		for id, plan := range written {
			want[id] = plan
		}
		Expect(len(written)).To(BeNumerically(">", 10))
		holds(s, want)
	})

	It("loses no update when two re-shards run at once beside writers (KV v2)", func(ctx SpecContext) {
		srv := server()
		for round := range 3 {
			m, a, want := fresh(srv, 2, 300)
			b, writer := openStore(srv.Addr, srv.Token, m), openStore(srv.Addr, srv.Token, m)
			stop := writeAlong(ctx, writer, 1, func(_, gen int) string { return fmt.Sprintf("inst-%04d", (gen*37+round)%300) },
				func(id, plan string) { want[id] = plan })
			errs := make(chan error, 2)
			for _, s := range []*vault.Store{a, b} {
				go func() { _, err := s.Indexes.Reshard(ctx, 32); errs <- err }()
			}
			for range 2 {
				err := <-errs
				if err != nil { // the one that lost the race on the layout document
					Expect(err).To(MatchError(vault.ErrConflict))
				}
			}
			_, err := a.Indexes.Reshard(ctx, 32)
			Expect(err).NotTo(HaveOccurred())
			stop()
			holds(a, want)
		}
	})

	It("never writes a new shard from a read that another re-shard and a writer made late", func(ctx SpecContext) {
		srv := server()
		m, s, want := fresh(srv, 2, 200)
		exe, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())

		// the late one: reads old shard 3, then waits
		cmd := exec.CommandContext(ctx, exe)
		cmd.Env = append(os.Environ(), "BLACKSMITH_RESHARD_CHILD=1", "VAULT_ADDR="+srv.Addr, "VAULT_TOKEN="+srv.Token,
			"BLACKSMITH_RESHARD_MOUNT="+m, "BLACKSMITH_RESHARD_TO=16", "BLACKSMITH_RESHARD_PAUSE_AT=read 3")
		stdin, err := cmd.StdinPipe()
		Expect(err).NotTo(HaveOccurred())
		stdout, err := cmd.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		Expect(cmd.Start()).To(Succeed())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		Expect(line).To(Equal("paused\n"))

		// meanwhile another re-shard finishes, and a writer changes a
		// record of old shard 3 in its new shard
		_, err = s.Indexes.Reshard(ctx, 16)
		Expect(err).NotTo(HaveOccurred())
		var id string
		for cand := range want {
			if vault.ShardOf(cand, 8) == 3 {
				id = cand
				break
			}
		}
		Expect(id).NotTo(BeEmpty())
		_, err = s.Update(ctx, map[string]vault.Change{id: record(id, 9)})
		Expect(err).NotTo(HaveOccurred())
		want[id] = "p9"

		_, err = stdin.Write([]byte("go on\n"))
		Expect(err).NotTo(HaveOccurred())
		Expect(cmd.Wait()).To(Succeed(), stderr.String())
		holds(s, want)
	})

	It("loses nothing when killed with SIGKILL after any step, and the next call finishes it", func(ctx SpecContext) {
		srv := server()
		exe, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		run := func(mount string, killAt int) (string, error) {
			cmd := exec.CommandContext(ctx, exe)
			cmd.Env = append(os.Environ(), "BLACKSMITH_RESHARD_CHILD=1", "VAULT_ADDR="+srv.Addr, "VAULT_TOKEN="+srv.Token,
				"BLACKSMITH_RESHARD_MOUNT="+mount, "BLACKSMITH_RESHARD_TO=16", "BLACKSMITH_RESHARD_KILL_AT="+strconv.Itoa(killAt))
			out, err := cmd.Output()
			return string(out), err
		}
		prepare := func() (*vault.Store, string, map[string]string) {
			m, s, want := fresh(srv, 2, 120)
			return s, m, want
		}

		_, m, _ := prepare()
		out, err := run(m, 0)
		Expect(err).NotTo(HaveOccurred())
		steps, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(out), "steps="))
		Expect(err).NotTo(HaveOccurred())
		Expect(steps).To(Equal(1+8*(1+2+1)+1), "start; per old shard its read, its 2 new shards and its marker; done")

		for k := 1; k < steps; k++ {
			s, m, want := prepare()
			_, err := run(m, k)
			var exit *exec.ExitError
			Expect(err).To(BeAssignableToTypeOf(exit), "step %d", k)
			Expect(err.(*exec.ExitError).Sys().(syscall.WaitStatus).Signal()).To(Equal(syscall.SIGKILL), "step %d", k)

			holds(s, want) // read in the middle of the re-shard
			id := fmt.Sprintf("inst-%04d", k)
			_, err = s.Update(ctx, map[string]vault.Change{id: record(id, k), "after-" + id: record(id, k)})
			Expect(err).NotTo(HaveOccurred(), "step %d", k)
			want[id], want["after-"+id] = "p"+strconv.Itoa(k), "p"+strconv.Itoa(k)
			holds(s, want)

			rep, err := s.Indexes.Reshard(ctx, 16)
			Expect(err).NotTo(HaveOccurred(), "step %d", k)
			Expect(rep.To).To(Equal(16))
			holds(s, want)
			Expect(layout(srv, m)["shards"]).To(BeNumerically("==", 16), "step %d", k)
		}
	})
})
