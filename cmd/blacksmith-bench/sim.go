package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

// buildSim builds the simulator command cmd (a directory of this module,
// "./cmd/bosh-director-sim" or "./cmd/cc-sim") into bin.
func buildSim(ctx context.Context, cmd, bin string) error {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("finding the module: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, cmd)
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building %s: %w", cmd, err)
	}
	return nil
}

// simProcess is a simulator running as a child process: the Director's, or
// the Cloud Controller's (cmd/cc-sim, which takes the same -listen,
// -latency and -seed flags and serves the same /_sim/stats and /_sim/reset).
type simProcess struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
}

// simStats is the part of GET /_sim/stats the bench reports.
type simStats struct {
	Requests map[string]int `json:"requests"`
	Tasks    int            `json:"tasks"`
}

// startSim starts the simulator bin with n seeded deployments (the Cloud
// Controller's: instances) and the flags extra, and waits until it answers.
func startSim(ctx context.Context, bin string, n int, latency time.Duration, extra ...string) (*simProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"-listen", addr, "-latency", latency.String(), "-seed", strconv.Itoa(n)}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the simulator %s: %w", filepath.Base(bin), err)
	}
	s := &simProcess{cmd: cmd, url: "http://" + addr, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, time.Minute); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *simProcess) waitReady(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		if _, err := s.stats(ctx); err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("the simulator %s exited before it was ready", filepath.Base(s.cmd.Path))
		case <-ctx.Done():
			return fmt.Errorf("the simulator %s is not ready after %s", filepath.Base(s.cmd.Path), limit)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop ends the simulator and waits for it.
func (s *simProcess) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// reset zeroes the simulator's counters.
func (s *simProcess) reset(ctx context.Context) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/_sim/reset", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("resetting the simulator's counters: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("resetting the simulator's counters: status %d", resp.StatusCode)
	}
	return nil
}

// stats reads the simulator's counters.
func (s *simProcess) stats(ctx context.Context) (simStats, error) {
	var st simStats
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/_sim/stats", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("simulator stats: status %d", resp.StatusCode)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// setEventsKept sets how many events the simulator keeps (the oldest go).
func (s *simProcess) setEventsKept(ctx context.Context, n int) error {
	return s.admin(ctx, http.MethodPost, "/_sim/config", fmt.Sprintf(`{"events_kept": %d}`, n), nil)
}

// setConfig changes the simulator's knobs (POST /_sim/config): latency and
// task duration, to the millisecond.
func (s *simProcess) setConfig(ctx context.Context, latency, taskDuration time.Duration) error {
	return s.admin(ctx, http.MethodPost, "/_sim/config",
		fmt.Sprintf(`{"latency_ms": %d, "task_duration_ms": %d}`, latency.Milliseconds(), taskDuration.Milliseconds()), nil)
}

// failNextTask makes the next task of deployment name end in error.
func (s *simProcess) failNextTask(ctx context.Context, name string) error {
	body, _ := json.Marshal(map[string]string{"deployment": name, "state": "error"})
	return s.admin(ctx, http.MethodPost, "/_sim/next-task", string(body), nil)
}

// taskLog is the simulator's task log since its last reset (GET /_sim/tasks).
func (s *simProcess) taskLog(ctx context.Context) ([]sim.TaskEntry, error) {
	var log []sim.TaskEntry
	err := s.admin(ctx, http.MethodGet, "/_sim/tasks", "", &log)
	return log, err
}

// manifest is the manifest the Director runs for deployment name.
func (s *simProcess) manifest(ctx context.Context, name string) (string, error) {
	var m struct {
		Manifest string `json:"manifest"`
	}
	err := s.director(ctx, "/deployments/"+name, &m)
	return m.Manifest, err
}

// changeDeployments redeploys k deployments with one more top-level key,
// through the admin API (as a bosh deploy out of band would: the simulator
// records their events): the first k in name order, or the last k when
// fromEnd (so that two scenarios change different ones); it returns k.
func (s *simProcess) changeDeployments(ctx context.Context, k int, tag string, fromEnd bool) (int, error) {
	var listing []struct {
		Name string `json:"name"`
	}
	if err := s.director(ctx, "/deployments?exclude_configs=true&exclude_releases=true&exclude_stemcells=true", &listing); err != nil {
		return 0, err
	}
	k = min(k, len(listing))
	chosen := listing[:k]
	if fromEnd {
		chosen = listing[len(listing)-k:]
	}
	for _, d := range chosen {
		var m struct {
			Manifest string `json:"manifest"`
		}
		if err := s.director(ctx, "/deployments/"+d.Name, &m); err != nil {
			return 0, err
		}
		key := "tags" // a second change of one deployment (few deployments) takes another key
		if strings.Contains(m.Manifest, "\ntags:\n") {
			key = "update_tags"
		}
		changed := strings.TrimRight(m.Manifest, "\n") + fmt.Sprintf("\n%s:\n  bench: %q\n", key, tag)
		if err := s.admin(ctx, http.MethodPut, "/_sim/deployments", changed, nil); err != nil {
			return 0, fmt.Errorf("changing %s: %w", d.Name, err)
		}
	}
	return k, nil
}

// director GETs path from the simulator's Director API as admin into v.
func (s *simProcess) director(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+path, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth("admin", "admin")
	return s.do(req, v)
}

// admin sends a request to the simulator's admin API.
func (s *simProcess) admin(ctx context.Context, method, path, body string, v any) error {
	req, err := http.NewRequestWithContext(ctx, method, s.url+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	return s.do(req, v)
}

func (s *simProcess) do(req *http.Request, v any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s %s: status %d: %s", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	if v == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
