package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/vaultcluster"
)

// fault is one scheduled fault: what it does and, once done, its window.
type fault struct {
	name  string
	at    time.Duration // after the start of the faults
	apply func(ctx context.Context, s *soak) error

	start, end    time.Time
	err           error
	leaderChanges int // daemon leader changes during it
	vaultSwitches int // the balancer's changes of active Vault node during it
}

// schedule is the soak's faults, spread over span: a kill -9 of the
// active Vault node during provisions, a Cloud Controller outage while the
// orphan deployments' retirement proof is gathered, the active node frozen
// 30 s, a sealed standby, the upgrade wave (a plan's new version, the
// broker VMs deployed again with it one at a time, a fleet upgrade asked
// for) under a Director storm, a kill -9 of the active node during the
// wave, a kill -9 of the leading daemon, the whole cluster restarted from
// disk, and a kill -9 of the active node during a reconciler run.
func schedule(span time.Duration) []*fault {
	list := []*fault{
		{name: "vault-kill-active-in-provisions", apply: killActive},
		{name: "cc-outage-in-retirement-proof", apply: func(ctx context.Context, s *soak) error {
			if err := s.cc.outage(ctx, true); err != nil {
				return err
			}
			sleep(ctx, 60*time.Second)
			return s.cc.outage(context.Background(), false)
		}},
		{name: "vault-stop-active-30s", apply: func(ctx context.Context, s *soak) error {
			n, err := s.cluster.Active(ctx)
			if err != nil {
				return err
			}
			if err := n.Stop(); err != nil {
				return err
			}
			sleep(ctx, 30*time.Second)
			return n.Cont()
		}},
		{name: "vault-sealed-standby", apply: func(ctx context.Context, s *soak) error {
			n, err := standby(ctx, s.cluster)
			if err != nil {
				return err
			}
			if err := s.cluster.Seal(ctx, n); err != nil {
				return err
			}
			sleep(ctx, 30*time.Second)
			return s.cluster.Unseal(ctx, n)
		}},
		{name: "upgrade-wave-director-storm", apply: upgradeWave},
		{name: "vault-kill-active-in-upgrade", apply: killActive},
		{name: "daemon-kill-leader", apply: func(ctx context.Context, s *soak) error {
			d := s.waitLeader(ctx)
			if d == nil {
				return fmt.Errorf("no daemon led within a minute")
			}
			d.kill()
			sleep(ctx, 15*time.Second)
			return d.start()
		}},
		{name: "vault-restart-all", apply: func(ctx context.Context, s *soak) error {
			return s.cluster.RestartAll(ctx)
		}},
		{name: "vault-kill-active-in-run", apply: func(ctx context.Context, s *soak) error {
			d := s.waitLeader(ctx)
			if d == nil {
				return fmt.Errorf("no daemon led within a minute")
			}
			if _, err := operator(ctx, d, http.MethodPost, "/b/reconcile"); err != nil {
				return err
			}
			return killActive(ctx, s)
		}},
	}
	for i, f := range list {
		f.at = span * time.Duration(i) / time.Duration(len(list))
	}
	return list
}

// waitLeader is the daemon that leads, waiting at most a minute for one
// (nil: none did).
func (s *soak) waitLeader(ctx context.Context) *daemon {
	deadline := time.Now().Add(time.Minute)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if d := s.leader(); d != nil {
			return d
		}
		sleep(ctx, time.Second)
	}
	return nil
}

// killActive kills the active Vault node (kill -9) and starts it again
// 20 s later.
func killActive(ctx context.Context, s *soak) error {
	n, err := s.cluster.Active(ctx)
	if err != nil {
		return err
	}
	n.Kill()
	sleep(ctx, 20*time.Second)
	return s.cluster.Restart(ctx, n)
}

// upgradeWave publishes redis-small's version 2.0.0 (the broker VMs
// deployed again with it, one at a time), asks the leader for a fleet
// upgrade, and puts both Directors in a storm (30% of requests answered
// 503, 3 s latency on every one) for 60 s of the wave.
func upgradeWave(ctx context.Context, s *soak) error {
	catalog, err := raisedCatalog(s.world.catalog, s.dir)
	if err != nil {
		return err
	}
	if err := s.rollingRestart(ctx, catalog); err != nil {
		return err
	}
	if err := s.startUpgrade(ctx); err != nil {
		return err
	}
	s.upgradeStarted = true
	for _, d := range s.world.directors {
		if err := d.storm(ctx, 3*time.Second, 0.3); err != nil {
			return err
		}
	}
	sleep(ctx, 60*time.Second)
	for _, d := range s.world.directors {
		if err := d.storm(context.Background(), 0, 0); err != nil {
			return err
		}
	}
	return nil
}

// standby is a node of c that runs and is not the active one.
func standby(ctx context.Context, c *vaultcluster.Cluster) (*vaultcluster.Node, error) {
	active, err := c.Active(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range c.Nodes {
		if n != active && n.Running() {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no standby")
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// operator sends an operator request to d and returns its body: an
// error for an answer other than 2xx or 409.
func operator(ctx context.Context, d *daemon, method, path string) ([]byte, error) {
	code, body, err := operatorDo(ctx, d, method, path)
	if err == nil && code/100 != 2 && code != http.StatusConflict {
		return body, fmt.Errorf("%s %s: %d %.300s", method, path, code, body)
	}
	return body, err
}

// operatorDo sends an operator request to d and returns its status and body.
func operatorDo(ctx context.Context, d *daemon, method, path string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, d.url+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth(opUser, opPass)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 32<<20))
	return res.StatusCode, body, err
}

// leaders watches which daemons say they lead, every 250ms: how often two
// did at once, and how often the leader changed.
type leaders struct {
	mu      sync.Mutex
	two     int
	changes int
	last    string
	seen    []string // leader ids in the order they led
}

// watch polls the daemons until ctx ends.
func (w *leaders) watch(ctx context.Context, s *soak) {
	for ctx.Err() == nil {
		var ids []string
		for _, d := range s.daemons {
			if !d.running() {
				continue
			}
			body, err := operator(ctx, d, http.MethodGet, "/b/reconcile")
			var st struct {
				Leader   bool   `json:"leader"`
				LeaderID string `json:"leader_id"`
			}
			if err == nil && json.Unmarshal(body, &st) == nil && st.Leader {
				ids = append(ids, st.LeaderID)
			}
		}
		w.mu.Lock()
		if len(ids) > 1 {
			w.two++
		}
		if len(ids) == 1 && ids[0] != w.last {
			w.changes++
			w.last = ids[0]
			w.seen = append(w.seen, ids[0])
		}
		w.mu.Unlock()
		sleep(ctx, 250*time.Millisecond)
	}
}

// counts are the two-leader looks and the leader changes so far.
func (w *leaders) counts() (int, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.two, w.changes
}
