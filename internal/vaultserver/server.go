package vaultserver

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// RootToken is the root token of every dev server started here.
const RootToken = "root"

// Options tunes a dev server.
type Options struct {
	// KVv1 makes the dev server's `secret/` mount KV version 1 (default: version 2).
	KVv1 bool
	// Args are extra arguments for `vault server` (default: none).
	Args []string
	// ReadyTimeout bounds the wait for the new server to answer (default: 30s).
	ReadyTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 30 * time.Second
	}
	return o
}

// Server is a running Vault dev server on 127.0.0.1.
type Server struct {
	// Addr is the server's URL, e.g. http://127.0.0.1:41234.
	Addr string
	// Token is the root token.
	Token string

	cmd      *exec.Cmd
	home     string
	log      *syncWriter
	stopOnce sync.Once
	exited   chan struct{}
}

// Start starts a dev server and waits until it answers, at most
// opts.ReadyTimeout and no longer than ctx allows. ctx bounds only the start:
// the server runs until Stop, which the caller must call.
func Start(ctx context.Context, opts Options) (*Server, error) {
	opts = opts.withDefaults()
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "testvault-")
	if err != nil {
		return nil, err
	}
	s := &Server{
		Addr:   "http://127.0.0.1:" + strconv.Itoa(port),
		Token:  RootToken,
		home:   home,
		log:    &syncWriter{w: &bytes.Buffer{}},
		exited: make(chan struct{}),
	}
	args := []string{"server", "-dev", "-dev-root-token-id=" + RootToken,
		"-dev-listen-address=127.0.0.1:" + strconv.Itoa(port), "-dev-no-store-token"}
	if opts.KVv1 {
		args = append(args, "-dev-kv-v1")
	}
	args = append(args, opts.Args...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = append(os.Environ(), "HOME="+home, "VAULT_ADDR=", "VAULT_TOKEN=")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(home)
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(ctx, opts.ReadyTimeout); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady(parent context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(parent, limit)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Addr+"/v1/sys/health", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("vault exited before it was ready: %s", s.log.String())
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				return fmt.Errorf("waiting for vault to answer: %w: %s", err, s.log.String())
			}
			return fmt.Errorf("vault not ready after %s: %s", limit, s.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop kills the server, waits for it to exit and removes its files. Safe to
// call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		os.RemoveAll(s.home)
	})
}

// Log returns what the server printed so far.
func (s *Server) Log() string { return s.log.String() }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.String()
}

// Pid is the Vault server process's id (0 once it has not started).
func (s *Server) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}
