// Command blacksmith-soak runs the daemon as operators run it on a Vault
// cluster and breaks it on a schedule (`make soak`): a three-node Vault
// cluster with Raft storage behind a balancer (internal/vaultcluster), two
// Director simulators with the seeded deployments, a Cloud Controller
// simulator holding the platform's instances (the seeded ones but three
// orphan deployments, and every instance the OSB clients ask for), three
// daemons with HA on (the leader lease in Vault) and the platform
// cross-check on (orphan deployments retired within the soak), and OSB
// clients that provision, update, bind, unbind and deprovision without
// pause. The faults: a kill -9 of the active Vault node during provisions,
// a Cloud Controller outage while a retirement's proof is gathered, the
// active node frozen (SIGSTOP) 30 s, a sealed standby, the upgrade wave (a
// plan's new version, the broker VMs deployed again one at a time, a fleet
// upgrade) under a Director storm (30% 503, 3 s latency), a kill -9 of the
// active node during the wave, a kill -9 of the leading daemon, the whole
// cluster restarted from disk, and a kill -9 of the active node during a
// reconciler run. After a settle period and a last run it checks what
// must hold: no record lost, no deployment made twice, no operation
// stuck, every binding's credentials intact, never two leading daemons,
// every OSB answer one a platform can act on, the fleet upgrade finished
// (or resumed) with nothing half-applied, no instance the platform holds
// deleted. It prints a FAULT line per fault (the seconds the OSB clients
// saw errors, their errors and retries, the Vault and daemon leader
// changes, the runs that failed and how long until one succeeded) and one
// SOAK line with the figures and the invariants, and exits 1 when one did
// not hold. Everything is on loopback, bounded by -duration (and a hard
// stop three minutes after it), and stops by itself.
//
//	go run ./cmd/blacksmith-soak -duration 11m -deployments 2000 -clients 10
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/vaultcluster"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// settings are the soak's command-line settings.
type settings struct {
	duration    time.Duration
	deployments int
	clients     int
	keep        bool
}

// faultLimit bounds one fault: a node that does not come back (a Vault
// standby that never learns its active node) ends the fault with an
// error, not the soak.
const faultLimit = 2 * time.Minute

// orphans is how many seeded deployments the platform does not hold:
// orphan deployments the daemons retire during the soak.
const orphans = 3

// soak is everything the soak runs.
type soak struct {
	dir            string
	cluster        *vaultcluster.Cluster
	cc             *platform
	world          daemonWorld
	daemons        []*daemon
	store          *vault.Store
	ledger         *ledger
	leaders        *leaders
	orphans        []string // the orphan deployments' names
	upgradeStarted bool
}

func run(args []string, stdout, stderr io.Writer) int {
	var o settings
	fs := flag.NewFlagSet("blacksmith-soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.duration, "duration", 11*time.Minute, "how long the soak runs, settle and checks included (at least 6m)")
	fs.IntVar(&o.deployments, "deployments", 2000, "deployments seeded over the two Director simulators")
	fs.IntVar(&o.clients, "clients", 10, "OSB clients at once")
	fs.BoolVar(&o.keep, "keep", false, "keep the working directory (logs of every process)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.duration < 6*time.Minute || o.deployments < 2*orphans || o.deployments > 20000 || o.clients < 1 || o.clients > 50 {
		fmt.Fprintf(stderr, "blacksmith-soak: -duration at least 6m, -deployments %d to 20000, -clients 1 to 50\n", 2*orphans)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.duration+3*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "blacksmith-soak-")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if o.keep {
		fmt.Fprintln(stderr, "blacksmith-soak: logs in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	s := &soak{dir: dir, leaders: &leaders{}, ledger: &ledger{errorSeconds: map[int64]bool{}, errorsAt: map[int64]int{},
		retriesAt: map[int64]int{}, live: map[string]bool{}, leaving: map[string]bool{}, bindings: map[string]string{}}}
	defer s.close()
	ok, err := s.run(ctx, o, dir, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "blacksmith-soak:", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

// run sets the soak up, runs the clients and the faults, settles and
// checks; false when an invariant did not hold.
func (s *soak) run(ctx context.Context, o settings, dir string, stdout, stderr io.Writer) (bool, error) {
	began := time.Now()
	root, err := moduleRoot(ctx)
	if err != nil {
		return false, err
	}
	if err := s.setUp(ctx, o, root, dir); err != nil {
		return false, err
	}
	fmt.Fprintf(stderr, "blacksmith-soak: set up in %s: 3 Vault nodes, 2 Director simulators with %d deployments, the platform, 3 daemons\n",
		time.Since(began).Round(time.Second), o.deployments)

	watch, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go s.leaders.watch(watch, s)
	clients, stopClients := context.WithCancel(ctx)
	done := make(chan struct{})
	b := &broker{daemons: s.daemons, client: &http.Client{Timeout: 90 * time.Second}}
	for range o.clients {
		go func() { defer func() { done <- struct{}{} }(); osbClient(clients, b, s.ledger, s.cc) }()
	}

	const warmup, settle = 45 * time.Second, 60 * time.Second
	span := o.duration - time.Since(began) - warmup - settle - 2*time.Minute
	faults := schedule(max(span, 3*time.Minute))
	sleep(ctx, warmup)
	start := time.Now()
	for _, f := range faults {
		sleep(ctx, time.Until(start.Add(f.at)))
		_, before := s.leaders.counts()
		switches := s.cluster.Balancer.Switches()
		f.start = time.Now()
		fctx, cancel := context.WithTimeout(ctx, faultLimit)
		f.err = f.apply(fctx, s)
		cancel()
		f.end = time.Now()
		_, after := s.leaders.counts()
		f.leaderChanges, f.vaultSwitches = after-before, int(s.cluster.Balancer.Switches()-switches)
		fmt.Fprintf(stderr, "blacksmith-soak: %s done in %s\n", f.name, f.end.Sub(f.start).Round(time.Second))
	}
	stopClients()
	for range o.clients {
		<-done
	}
	sleep(ctx, settle)
	if d := s.leader(); d != nil {
		_, _ = operator(ctx, d, http.MethodPost, "/b/reconcile?wait=180s")
	}
	up := s.finishUpgrade(ctx, s.upgradeStarted)
	v, err := s.check(ctx)
	stopWatch()
	if err != nil {
		return false, err
	}
	v.upgrade(up)
	runs := s.runs(ctx)
	for _, f := range faults {
		fmt.Fprintf(stdout, "FAULT %s\n", s.figures(f, runs))
	}
	s.ledger.mu.Lock()
	line := map[string]any{
		"duration_s": int(time.Since(began).Seconds()), "deployments": o.deployments, "clients": o.clients,
		"osb_requests": s.ledger.requests, "osb_errors": s.ledger.errors, "osb_error_seconds": len(s.ledger.errorSeconds),
		"leader_changes": len(s.leaders.seen) - 1, "vault_leader_changes": s.cluster.Balancer.Switches(),
		"faults": len(faults), "upgrade": up, "invariants": v, "held": v.held(), "runs": len(runs), "runs_failed": failedRuns(runs),
		"retirement": retirement(runs),
	}
	s.ledger.mu.Unlock()
	for _, f := range faults {
		if f.err != nil {
			line["fault_errors"] = append(asStrings(line["fault_errors"]), f.name+": "+f.err.Error())
		}
	}
	raw, _ := json.Marshal(line)
	fmt.Fprintf(stdout, "SOAK %s\n", raw)
	return v.held(), nil
}

// asStrings is v as a []string (nil when it is not one).
func asStrings(v any) []string { s, _ := v.([]string); return s }

// leader is the daemon that says it leads, nil when none does.
func (s *soak) leader() *daemon {
	for _, d := range s.daemons {
		if !d.running() {
			continue
		}
		body, err := operator(context.Background(), d, http.MethodGet, "/b/reconcile")
		var st struct {
			Leader bool `json:"leader"`
		}
		if err == nil && json.Unmarshal(body, &st) == nil && st.Leader {
			return d
		}
	}
	return nil
}

// close stops everything the soak started.
func (s *soak) close() {
	if s.store != nil {
		s.store.Close()
	}
	for _, d := range s.daemons {
		d.kill()
	}
	for _, d := range s.world.directors {
		d.kill()
	}
	if s.cc != nil {
		s.cc.kill()
	}
	if s.cluster != nil {
		s.cluster.Close()
	}
}
