package main

import (
	"context"
	"encoding/json"
	"fmt"
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

	start, end time.Time
	err        error
}

// schedule is the soak's faults, spread over span: a kill -9 of the active
// Vault node, the active node frozen 30 s, a sealed standby, the whole
// cluster restarted from disk, a kill -9 of the leading daemon, and a kill
// -9 of the active Vault node during a reconciler run.
func schedule(span time.Duration) []*fault {
	step := span / 6
	return []*fault{
		{name: "vault-kill-active", at: 0, apply: func(ctx context.Context, s *soak) error {
			n, err := s.cluster.Active(ctx)
			if err != nil {
				return err
			}
			n.Kill()
			sleep(ctx, 20*time.Second)
			return s.cluster.Restart(ctx, n)
		}},
		{name: "vault-stop-active-30s", at: step, apply: func(ctx context.Context, s *soak) error {
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
		{name: "vault-sealed-standby", at: 2 * step, apply: func(ctx context.Context, s *soak) error {
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
		{name: "vault-restart-all", at: 3 * step, apply: func(ctx context.Context, s *soak) error {
			return s.cluster.RestartAll(ctx)
		}},
		{name: "daemon-kill-leader", at: 4 * step, apply: func(ctx context.Context, s *soak) error {
			d := s.leader()
			if d == nil {
				return fmt.Errorf("no daemon leads")
			}
			d.kill()
			sleep(ctx, 15*time.Second)
			return d.start()
		}},
		{name: "vault-kill-active-in-run", at: 5 * step, apply: func(ctx context.Context, s *soak) error {
			d := s.leader()
			if d == nil {
				return fmt.Errorf("no daemon leads")
			}
			if _, err := operator(ctx, d, http.MethodPost, "/b/reconcile"); err != nil {
				return err
			}
			n, err := s.cluster.Active(ctx)
			if err != nil {
				return err
			}
			n.Kill()
			sleep(ctx, 20*time.Second)
			return s.cluster.Restart(ctx, n)
		}},
	}
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

// operator sends an operator request to d and returns its body.
func operator(ctx context.Context, d *daemon, method, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, d.url+path, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(opUser, opPass)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var out json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 && res.StatusCode != http.StatusConflict {
		return out, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
	return out, nil
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
