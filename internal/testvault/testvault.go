package testvault

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// RootToken is the root token of every dev server started here.
const RootToken = "root"

// ErrNoBinary means no Vault binary was found; see Binary for where it looks.
var ErrNoBinary = errors.New("no vault binary: run `make vault` (or set VAULT_BIN)")

// Options tunes a dev server.
type Options struct {
	// KVv1 makes the dev server's `secret/` mount KV version 1 (default: version 2).
	KVv1 bool
	// Args are extra arguments for `vault server`.
	Args []string
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

// InCI reports whether the suite runs in CI, where a missing Vault must fail.
func InCI() bool { return os.Getenv("CI") == "true" }

// Binary returns the path of a Vault binary: $VAULT_BIN, else the binary that
// ci/vault-bin.sh caches under the user's cache directory keyed by
// ci/vault/go.sum, else `vault` on PATH.
func Binary() (string, error) {
	if p := os.Getenv("VAULT_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("VAULT_BIN=%s: %w", p, err)
		}
		return p, nil
	}
	if p, err := cachedBinary(); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("vault"); err == nil {
		return p, nil
	}
	return "", ErrNoBinary
}

func cachedBinary() (string, error) {
	sum, err := findUp(filepath.Join("ci", "vault", "go.sum"))
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(data)
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(cache, "blacksmith", "vault-"+hex.EncodeToString(h[:])[:16], "vault")
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

// findUp looks for rel in the working directory and its parents.
func findUp(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s not found above the working directory", rel)
		}
		dir = parent
	}
}

// Start starts a dev server and waits until it answers. Call Stop when done.
func Start(opts Options) (*Server, error) {
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
	if err := s.waitReady(30 * time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady(limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
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
			return fmt.Errorf("vault not ready after %s: %s", limit, s.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop kills the server and removes its files. Safe to call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		os.RemoveAll(s.home)
	})
}

// Do sends an authenticated request to the server's HTTP API, e.g.
// Do("POST", "/v1/sys/mounts/kv1", `{"type":"kv","options":{"version":"1"}}`).
func (s *Server) Do(method, path, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, s.Addr+path, bytes.NewBufferString(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Vault-Token", s.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, err = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.Bytes(), err
}

// EnableKV mounts a KV secrets engine of the given version (1 or 2) at path.
func (s *Server) EnableKV(path string, version int) error {
	body := fmt.Sprintf(`{"type":"kv","options":{"version":"%d"}}`, version)
	code, out, err := s.Do(http.MethodPost, "/v1/sys/mounts/"+path, body)
	if err != nil {
		return err
	}
	if code/100 != 2 {
		return fmt.Errorf("mounting kv v%d at %s: %d %s", version, path, code, out)
	}
	if version == 2 {
		return s.waitKV2(path)
	}
	return nil
}

// waitKV2 waits until a new KV v2 mount has finished its upgrade and accepts writes.
func (s *Server) waitKV2(path string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		code, _, err := s.Do(http.MethodGet, "/v1/"+path+"/config", "")
		if err == nil && code == http.StatusOK {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("kv v2 mount %s not ready", path)
}

// Seal seals the server (every later request fails with a sealed error).
func (s *Server) Seal() error {
	code, out, err := s.Do(http.MethodPut, "/v1/sys/seal", "")
	if err != nil {
		return err
	}
	if code/100 != 2 {
		return fmt.Errorf("sealing: %d %s", code, out)
	}
	return nil
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
