package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Credentials of the processes the soak starts (loopback only).
const (
	brokerUser, brokerPass = "broker", "soak-broker"
	opUser, opPass         = "operator", "soak-operator"
	simUser, simPass       = "admin", "admin"
)

// moduleRoot is the directory of this module's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// build builds the command pkg of the module at root into dir.
func build(ctx context.Context, root, pkg, dir string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir, cmd.Stderr = root, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s: %w", pkg, err)
	}
	return bin, nil
}

// freeAddr is a free 127.0.0.1 host:port.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// proc is a child process the soak can kill and start again with the same
// arguments.
type proc struct {
	name string
	args []string
	log  *os.File

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// start starts the process; the soak kills it before it ends.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	return nil
}

// kill sends SIGKILL (kill -9) and waits for the process to end.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.cmd = nil
	p.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		<-exited
	}
}

// running says whether the process was started and has not ended.
func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// startSim starts the Director simulator with n seeded deployments.
func startSim(bin, dir string, n int) (*proc, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	log, err := os.Create(filepath.Join(dir, "director-sim.log"))
	if err != nil {
		return nil, "", err
	}
	p := &proc{name: "director-sim", log: log, args: []string{bin, "-listen", addr, "-task-duration", "2s",
		"-agent-timeout", "100ms", "-seed", strconv.Itoa(n), "-user", simUser, "-password", simPass}}
	if err := p.start(); err != nil {
		return nil, "", err
	}
	url := "http://" + addr
	return p, url, waitHTTP(url+"/info", time.Minute)
}

// daemon is one broker VM: a blacksmith process with HA on.
type daemon struct {
	*proc
	url string
}

// startDaemon writes the configuration of daemon i and starts it.
func startDaemon(bin, dir string, i int, vaultAddr, token, director, catalog string) (*daemon, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`broker:
  listen: %s
  username: %s
  password: %s
operator:
  admin: {username: %s, password: %s}
vault:
  address: %s
  token: %s
  mount: secret
bosh:
  address: %s
  username: %s
  password: %s
  timeout: 60s
catalog:
  dirs: [%s]
reconciler:
  interval: 45s
  retry_delay: 1s
  stop_timeout: 10s
ha:
  enabled: true
  lease_ttl: 6s
`, addr, brokerUser, brokerPass, opUser, opPass, vaultAddr, token, director, simUser, simPass, strconv.Quote(catalog))
	path := filepath.Join(dir, fmt.Sprintf("blacksmith-%d.conf", i))
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, fmt.Sprintf("blacksmith-%d.log", i)))
	if err != nil {
		return nil, err
	}
	d := &daemon{proc: &proc{name: fmt.Sprintf("blacksmith-%d", i), log: log, args: []string{bin, "-c", path}}, url: "http://" + addr}
	if err := d.start(); err != nil {
		return nil, err
	}
	return d, waitHTTP(d.url+"/healthz", time.Minute)
}

// waitHTTP waits until url answers at all, at most limit.
func waitHTTP(url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %s: %w", url, limit, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
