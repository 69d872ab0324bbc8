package vaultcluster

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Node is one Vault server of the cluster: its process, its configuration
// file and its Raft data directory, which outlive the process (Restart).
type Node struct {
	// ID is the node's Raft node id, e.g. "node-1".
	ID string
	// Addr is the node's own API URL, e.g. http://127.0.0.1:41234.
	Addr string

	bin, dir, config string
	log              *syncBuffer

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// writeConfig writes the node's configuration file: Raft storage in its data
// directory with a retry_join block for every node of peers, a TCP listener
// on api and its cluster_address on cluster.
func (n *Node) writeConfig(api, cluster string, peers []string) error {
	data := filepath.Join(n.dir, "raft")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	var b strings.Builder
	// performance_multiplier 1: Raft's production timing, as Vault's docs
	// recommend (the default, 5, is for development machines).
	fmt.Fprintf(&b, "storage \"raft\" {\n  path = %q\n  node_id = %q\n  performance_multiplier = 1\n", data, n.ID)
	for _, p := range peers {
		fmt.Fprintf(&b, "  retry_join {\n    leader_api_addr = %q\n  }\n", p)
	}
	fmt.Fprintf(&b, "}\nlistener \"tcp\" {\n  address = %q\n  cluster_address = %q\n  tls_disable = true\n}\n", api, cluster)
	fmt.Fprintf(&b, "api_addr = %q\ncluster_addr = %q\ndisable_mlock = true\n", "http://"+api, "http://"+cluster)
	n.config = filepath.Join(n.dir, "vault.hcl")
	return os.WriteFile(n.config, []byte(b.String()), 0o600)
}

// start starts the node's process from its configuration file; it answers
// sealed once it listens.
func (n *Node) start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		return fmt.Errorf("%s is already running", n.ID)
	}
	cmd := exec.Command(n.bin, "server", "-config="+n.config)
	cmd.Env = append(os.Environ(), "HOME="+n.dir, "VAULT_ADDR=", "VAULT_TOKEN=", "VAULT_CLUSTER_ADDR=", "VAULT_API_ADDR=")
	cmd.Stdout, cmd.Stderr = n.log, n.log
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", n.ID, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	n.cmd, n.exited = cmd, exited
	return nil
}

// signal sends sig to the node's process; an error when it is not running.
func (n *Node) signal(sig syscall.Signal) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return fmt.Errorf("%s is not running", n.ID)
	}
	return n.cmd.Process.Signal(sig)
}

// Kill sends SIGKILL to the node's process and waits until it has exited;
// nothing when it is not running. Its data directory stays.
func (n *Node) Kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies too, but say so
	_ = cmd.Process.Kill()
	<-exited
}

// Stop freezes the node's process (SIGSTOP): it holds its ports and its
// connections but answers nothing until Cont.
func (n *Node) Stop() error { return n.signal(syscall.SIGSTOP) }

// Cont resumes a node frozen by Stop (SIGCONT).
func (n *Node) Cont() error { return n.signal(syscall.SIGCONT) }

// Running says whether the node's process was started and not killed.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// Pid is the node's process id, 0 when it is not running.
func (n *Node) Pid() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// Log returns what the node printed so far, across restarts.
func (n *Node) Log() string { return n.log.String() }

// Health is the status code of the node's /v1/sys/health within timeout:
// 200 active, 429 standby, 503 sealed, 501 not initialized, 472-474 the
// other standby states; 0 when it does not answer.
func (n *Node) Health(ctx context.Context, timeout time.Duration) int {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.Addr+"/v1/sys/health", nil)
	if err != nil {
		return 0
	}
	resp, err := healthClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// healthClient asks nodes for their health without keeping connections to
// nodes that may be frozen or killed.
var healthClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// syncBuffer is a bytes.Buffer safe for the process's two writers and a
// reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b.Len() > 8<<20 {
		w.b.Reset() // a soak's nodes log for minutes: keep the tail bounded
	}
	return w.b.Write(p)
}

// String returns what was written.
func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
