package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildSim builds cmd/bosh-director-sim of this module into bin.
func buildSim(ctx context.Context, bin string) error {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("finding the module: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/bosh-director-sim")
	cmd.Dir, cmd.Stderr = root, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the Director simulator: %w", err)
	}
	return nil
}

// simProcess is the Director simulator running as a child process.
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

// startSim starts the simulator with n seeded deployments and waits until it answers.
func startSim(ctx context.Context, bin string, n int, latency time.Duration) (*simProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "-listen", addr, "-latency", latency.String(), "-seed", strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the Director simulator: %w", err)
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
			return fmt.Errorf("the Director simulator exited before it was ready")
		case <-ctx.Done():
			return fmt.Errorf("the Director simulator is not ready after %s", limit)
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
