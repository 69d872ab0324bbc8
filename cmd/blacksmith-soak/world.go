package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// simulator is one Director simulator: its process, URL, name in the
// daemons' configuration and the deployments seeded on it.
type simulator struct {
	*proc
	name, url string
	seeded    []string
}

// startSim starts a Director simulator named name (10 workers, 2 s
// tasks) and seeds n deployments on it through its admin API.
func startSim(bin, dir, name string, n int) (*simulator, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p, err := newProc(dir, "director-"+name, bin, "-listen", addr, "-task-duration", "2s", "-workers", "10",
		"-agent-timeout", "100ms", "-name", name, "-user", simUser, "-password", simPass)
	if err != nil {
		return nil, err
	}
	if err := p.start(); err != nil {
		return nil, err
	}
	s := &simulator{proc: p, name: name, url: "http://" + addr}
	if err := waitHTTP(s.url+"/info", time.Minute); err != nil {
		return nil, err
	}
	if n == 0 {
		return s, nil
	}
	var out struct {
		Names []string `json:"names"`
	}
	if err := admin(context.Background(), s.url+"/_sim/seed", map[string]any{"count": n}, &out); err != nil {
		return nil, fmt.Errorf("seeding %s: %w", name, err)
	}
	s.seeded = out.Names
	return s, nil
}

// storm sets the simulator's latency and failures (/_sim/config): a
// Director storm, or none.
func (s *simulator) storm(ctx context.Context, latency time.Duration, rate float64) error {
	failures := []map[string]any{}
	if rate > 0 {
		failures = append(failures, map[string]any{"rate": rate, "status": http.StatusServiceUnavailable})
	}
	return admin(ctx, s.url+"/_sim/config", map[string]any{"latency_ms": latency.Milliseconds(), "failures": failures}, nil)
}

// platform is the Cloud Controller simulator whose broker "blacksmith" the
// daemons cross-check their instances against.
type platform struct {
	*proc
	url string

	mu   sync.Mutex
	held map[string]bool // the instances it holds (ids)
}

// startCC starts the Cloud Controller simulator.
func startCC(bin, dir string) (*platform, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p, err := newProc(dir, "cc-sim", bin, "-listen", addr, "-broker", "blacksmith")
	if err != nil {
		return nil, err
	}
	if err := p.start(); err != nil {
		return nil, err
	}
	cc := &platform{proc: p, url: "http://" + addr, held: map[string]bool{}}
	return cc, waitHTTP(cc.url+"/", time.Minute)
}

// add makes the platform hold the managed instance named by a deployment
// ("{plan id}-{instance id}"), as the Cloud Controller holds an instance
// from the moment a user asks for it.
func (cc *platform) add(ctx context.Context, deployment string) error {
	id := instanceOf.FindString(deployment)
	plan := strings.TrimSuffix(strings.TrimSuffix(deployment, id), "-")
	if id == "" || plan == "" {
		return fmt.Errorf("%q names no plan and instance", deployment)
	}
	err := admin(ctx, cc.url+"/_sim/service_instances", map[string]any{"guid": id, "name": plan + "-" + id[:8],
		"plan": plan, "org": "soak-org", "space": "soak-space"}, nil)
	if err == nil {
		cc.mu.Lock()
		cc.held[id] = true
		cc.mu.Unlock()
	}
	return err
}

// remove makes the platform forget instance id (its deprovision ended).
func (cc *platform) remove(ctx context.Context, id string) error {
	err := admin(ctx, cc.url+"/_sim/service_instances/"+id, nil, nil)
	if err == nil {
		cc.mu.Lock()
		delete(cc.held, id)
		cc.mu.Unlock()
	}
	return err
}

// holds are the instances the platform holds.
func (cc *platform) holds() map[string]bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return maps.Clone(cc.held)
}

// outage makes every Cloud Controller request answer 503 (on), or none.
func (cc *platform) outage(ctx context.Context, on bool) error {
	failures := []map[string]any{}
	if on {
		failures = append(failures, map[string]any{"rate": 0, "status": http.StatusServiceUnavailable})
	}
	return admin(ctx, cc.url+"/_sim/config", map[string]any{"failures": failures}, nil)
}

// admin sends a simulator's admin request: POST body as JSON (DELETE when
// body is nil), the answer decoded into out when out is not nil.
func admin(ctx context.Context, url string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	method, raw := http.MethodDelete, []byte(nil)
	if body != nil {
		method, raw = http.MethodPost, must(json.Marshal(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %.200s", method, url, strconv.Itoa(res.StatusCode), text)
	}
	if out != nil {
		return json.Unmarshal(text, out)
	}
	return nil
}

// must is b, whose error cannot happen (a marshalled map of plain values).
func must(b []byte, _ error) []byte { return b }
