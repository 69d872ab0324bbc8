package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// raisedCatalog copies the catalog at from to dir/catalog-2.0.0 with
// redis-small's maintenance_info version raised to 2.0.0 and its manifest
// template changed (a top-level tag), as an operator publishes a plan's
// new version: every redis-small instance recorded at 1.0.0 is outdated.
func raisedCatalog(from, dir string) (string, error) {
	to := filepath.Join(dir, "catalog-2.0.0")
	if out, err := exec.Command("cp", "-r", from, to).CombinedOutput(); err != nil {
		return "", fmt.Errorf("copying the catalog: %w: %s", err, out)
	}
	plan := filepath.Join(to, "redis", "small", "plan.yml")
	text, err := os.ReadFile(plan)
	if err != nil {
		return "", err
	}
	if !strings.Contains(string(text), "  version: 1.0.0\n") {
		return "", fmt.Errorf("%s: no maintenance_info version 1.0.0 to raise", plan)
	}
	raised := strings.Replace(string(text), "  version: 1.0.0\n", "  version: 2.0.0\n", 1)
	if err := os.WriteFile(plan, []byte(raised), 0o644); err != nil {
		return "", err
	}
	manifest := filepath.Join(to, "redis", "small", "manifest.yml")
	text, err = os.ReadFile(manifest)
	if err != nil {
		return "", err
	}
	return to, os.WriteFile(manifest, append(text, []byte("\ntags:\n  templates: \"2.0.0\"\n")...), 0o644)
}

// rollingRestart deploys the broker again with catalog, one VM at a time
// as `bosh deploy` does: each daemon stopped (SIGTERM), its configuration
// rewritten, started, and answering before the next.
func (s *soak) rollingRestart(ctx context.Context, catalog string) error {
	s.world.catalog = catalog
	for _, d := range s.daemons {
		d.stop(20 * time.Second)
		if err := d.writeConfig(s.world); err != nil {
			return err
		}
		if err := d.start(); err != nil {
			return err
		}
		if err := waitHTTP(d.url+"/healthz", time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// startUpgrade asks the leading daemon for a fleet upgrade of every
// outdated instance (10 at once, no failure limit: the storm's failures
// are rolled back, the others go on), trying for at most a minute while
// no daemon leads.
func (s *soak) startUpgrade(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		d := s.leader()
		var err error
		if d != nil {
			var code int
			var body []byte
			code, body, err = operatorDo(ctx, d, http.MethodPost, "/b/upgrades?max_in_flight=10&max_failures=0")
			if err == nil && code == http.StatusAccepted {
				return nil
			}
			if err == nil {
				err = fmt.Errorf("POST /b/upgrades: %d %.300s", code, body)
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no fleet upgrade started: %v", err)
		}
		sleep(ctx, 2*time.Second)
	}
}

// upgradeStatus is what the soak reads of GET /b/upgrades.
type upgradeStatus struct {
	Current *struct {
		Running bool           `json:"running"`
		Stopped string         `json:"stopped"`
		Error   string         `json:"error"`
		Counts  map[string]int `json:"counts"`
	} `json:"current"`
	InFlight []json.RawMessage `json:"in_flight"`
}

// upgradeFigures are the fleet upgrade's end: as the leader last saw it,
// whether it had to be resumed, and what was left half-applied after.
type upgradeFigures struct {
	Started     bool           `json:"started"`
	Counts      map[string]int `json:"counts,omitempty"`
	Stopped     string         `json:"stopped,omitempty"`
	Resumed     bool           `json:"resumed"`
	HalfApplied int            `json:"half_applied"`
	Problem     string         `json:"problem,omitempty"`
}

// finishUpgrade waits (at most 3 minutes) for the fleet upgrade to end on
// the leader; when the leader does not know it (it changed) or the
// journal still holds upgrades under way, it asks for a fleet upgrade
// again (which finishes those first) and waits for that one: what is left
// in the journal after is half-applied.
func (s *soak) finishUpgrade(ctx context.Context, started bool) upgradeFigures {
	f := upgradeFigures{Started: started}
	if !started {
		return f
	}
	st, err := s.waitUpgrade(ctx, 3*time.Minute)
	if err == nil && (st.Current == nil || len(st.InFlight) > 0) {
		f.Resumed = true
		if err = s.startUpgrade(ctx); err == nil {
			st, err = s.waitUpgrade(ctx, 3*time.Minute)
		}
	}
	if err != nil {
		f.Problem = err.Error()
		f.HalfApplied = -1
		return f
	}
	if st.Current != nil {
		f.Counts, f.Stopped = st.Current.Counts, st.Current.Stopped
	}
	f.HalfApplied = len(st.InFlight)
	return f
}

// waitUpgrade polls the leader's GET /b/upgrades until no fleet upgrade
// runs, at most limit.
func (s *soak) waitUpgrade(ctx context.Context, limit time.Duration) (upgradeStatus, error) {
	deadline := time.Now().Add(limit)
	for {
		var st upgradeStatus
		d := s.leader()
		if d != nil {
			body, err := operator(ctx, d, http.MethodGet, "/b/upgrades?instances=0")
			if err == nil && json.Unmarshal(body, &st) == nil && (st.Current == nil || !st.Current.Running) {
				return st, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return st, fmt.Errorf("the fleet upgrade did not end within %s", limit)
		}
		sleep(ctx, 2*time.Second)
	}
}
