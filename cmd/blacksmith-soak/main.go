// Command blacksmith-soak runs the daemon as operators run it on a Vault
// cluster and breaks the cluster on a schedule (`make soak`): a three-node
// Vault cluster with Raft storage behind a balancer (internal/vaultcluster),
// the Director simulator with seeded deployments, three daemons with HA on
// (the leader lease in Vault), and OSB clients that provision, update,
// bind, unbind and deprovision without pause. The faults: a kill -9 of the
// active Vault node, the active node frozen (SIGSTOP) 30 s, a sealed
// standby, the whole cluster restarted from disk, a kill -9 of the leading
// daemon, and a kill -9 of the active Vault node during a reconciler run.
// After a settle period and a last run it checks what must hold: no record
// lost, no deployment made twice, no operation stuck, every binding's
// credentials intact, never two leading daemons, every OSB answer one a
// platform can act on. It prints a FAULT line per fault (the seconds the
// OSB clients saw errors, the errors, the leader changes) and one SOAK line
// with the figures and the invariants, and exits 1 when one did not hold.
// Everything is on loopback, bounded by -duration (and a hard stop two
// minutes after it), and stops by itself.
//
//	go run ./cmd/blacksmith-soak -duration 10m -deployments 200 -clients 4
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
	"path/filepath"
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

// soak is everything the soak runs.
type soak struct {
	cluster  *vaultcluster.Cluster
	sim      *proc
	director string
	daemons  []*daemon
	store    *vault.Store
	ledger   *ledger
	leaders  *leaders
}

func run(args []string, stdout, stderr io.Writer) int {
	var o settings
	fs := flag.NewFlagSet("blacksmith-soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.duration, "duration", 10*time.Minute, "how long the soak runs, settle and checks included (at least 5m)")
	fs.IntVar(&o.deployments, "deployments", 200, "deployments seeded on the Director simulator")
	fs.IntVar(&o.clients, "clients", 4, "OSB clients at once")
	fs.BoolVar(&o.keep, "keep", false, "keep the working directory (logs of every process)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.duration < 5*time.Minute || o.deployments < 0 || o.deployments > 20000 || o.clients < 1 || o.clients > 50 {
		fmt.Fprintln(stderr, "blacksmith-soak: -duration at least 5m, -deployments 0 to 20000, -clients 1 to 50")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.duration+2*time.Minute)
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
	s := &soak{leaders: &leaders{},
		ledger: &ledger{errorSeconds: map[int64]bool{}, live: map[string]bool{}, leaving: map[string]bool{}, bindings: map[string]string{}}}
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
	daemonBin, err := build(ctx, root, "./cmd/blacksmith", dir)
	if err != nil {
		return false, err
	}
	simBin, err := build(ctx, root, "./cmd/bosh-director-sim", dir)
	if err != nil {
		return false, err
	}
	if s.cluster, err = vaultcluster.Start(ctx, vaultcluster.Options{}); err != nil {
		return false, fmt.Errorf("starting the Vault cluster: %w", err)
	}
	if s.sim, s.director, err = startSim(simBin, dir, o.deployments); err != nil {
		return false, err
	}
	for i := range 3 {
		d, err := startDaemon(daemonBin, dir, i+1, s.cluster.Addr(), s.cluster.Token, s.director, filepath.Join(root, "manifests", "catalog"))
		if err != nil {
			return false, err
		}
		s.daemons = append(s.daemons, d)
	}
	if s.store, err = vault.New(ctx, vault.Options{Address: s.cluster.Addr(), Token: s.cluster.Token}); err != nil {
		return false, err
	}
	fmt.Fprintf(stderr, "blacksmith-soak: set up in %s: 3 Vault nodes, the Director simulator with %d deployments, 3 daemons\n",
		time.Since(began).Round(time.Second), o.deployments)

	watch, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go s.leaders.watch(watch, s)
	clients, stopClients := context.WithCancel(ctx)
	done := make(chan struct{})
	b := &broker{daemons: s.daemons, client: &http.Client{Timeout: 90 * time.Second}}
	for range o.clients {
		go func() { defer func() { done <- struct{}{} }(); osbClient(clients, b, s.ledger) }()
	}

	const warmup, settle = 45 * time.Second, 60 * time.Second
	span := o.duration - time.Since(began) - warmup - settle - time.Minute
	faults := schedule(max(span, 3*time.Minute))
	sleep(ctx, warmup)
	start := time.Now()
	for _, f := range faults {
		sleep(ctx, time.Until(start.Add(f.at)))
		_, before := s.leaders.counts()
		f.start = time.Now()
		f.err = f.apply(ctx, s)
		f.end = time.Now()
		_, after := s.leaders.counts()
		fmt.Fprintf(stdout, "FAULT %s\n", s.figures(f, after-before))
	}
	stopClients()
	for range o.clients {
		<-done
	}
	sleep(ctx, settle)
	if d := s.leader(); d != nil {
		_, _ = operator(ctx, d, http.MethodPost, "/b/reconcile?wait=180s")
	}
	v, err := s.check(ctx)
	stopWatch()
	if err != nil {
		return false, err
	}
	s.ledger.mu.Lock()
	line := map[string]any{
		"duration_s": int(time.Since(began).Seconds()), "deployments": o.deployments, "clients": o.clients,
		"osb_requests": s.ledger.requests, "osb_errors": s.ledger.errors, "osb_error_seconds": len(s.ledger.errorSeconds),
		"leader_changes": len(s.leaders.seen) - 1, "faults": len(faults), "invariants": v, "held": v.held(),
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

// figures is a fault's FAULT line: its window and what the OSB clients saw
// in it and the 30 s after it.
func (s *soak) figures(f *fault, leaderChanges int) string {
	s.ledger.mu.Lock()
	errSeconds := 0
	for sec := range s.ledger.errorSeconds {
		if sec >= f.start.Unix() && sec <= f.end.Add(30*time.Second).Unix() {
			errSeconds++
		}
	}
	s.ledger.mu.Unlock()
	out := map[string]any{"fault": f.name, "seconds": int(f.end.Sub(f.start).Seconds()), "osb_error_seconds": errSeconds,
		"leader_changes": leaderChanges, "ok": f.err == nil}
	if f.err != nil {
		out["error"] = f.err.Error()
	}
	raw, _ := json.Marshal(out)
	return string(raw)
}

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
	if s.sim != nil {
		s.sim.kill()
	}
	if s.cluster != nil {
		s.cluster.Close()
	}
}
