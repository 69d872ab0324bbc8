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
	"syscall"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// Credentials of the processes the soak starts (loopback only).
const (
	brokerUser, brokerPass = "broker", "soak-broker"
	opUser, opPass         = "operator", "soak-operator"
	simUser, simPass       = "admin", "admin"
	ccClient, ccSecret     = "blacksmith-cc", "secret" // cf/sim's defaults
)

// The retirement of orphan deployments, short enough to happen within a
// soak: proven by three platform reads over retireMinAge, stopped, then
// deleted retirePeriod later.
const retireMinAge, retirePeriod = 2 * time.Minute, 2 * time.Minute

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

// waitHTTP waits until url answers at all, asking every 200 ms, at most limit.
func waitHTTP(url string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			return nil
		}
		if retry.Sleep(ctx, 200*time.Millisecond) != nil {
			return fmt.Errorf("%s did not answer within %s: %w", url, limit, err)
		}
	}
}

// stop sends SIGTERM (a broker VM's orderly stop) and waits for the
// process to end, at most limit; then kill -9.
func (p *proc) stop(limit time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		p.mu.Lock()
		p.cmd = nil
		p.mu.Unlock()
	case <-time.After(limit):
		p.kill()
	}
}

// newProc is a process named name logging to dir/name.log.
func newProc(dir, name string, args ...string) (*proc, error) {
	log, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &proc{name: name, log: log, args: args}, nil
}

// daemon is one broker VM: a blacksmith process with HA on.
type daemon struct {
	*proc
	url    string
	config string // its configuration file's path
	addr   string
}

// daemonWorld is what every daemon's configuration names.
type daemonWorld struct {
	vault, token string
	directors    []*simulator
	cc           string // the Cloud Controller simulator's URL
	catalog      string // the catalog folder
}

// writeConfig writes the daemon's configuration for w.
func (d *daemon) writeConfig(w daemonWorld) error {
	var bosh strings.Builder
	for _, s := range w.directors {
		fmt.Fprintf(&bosh, "  - name: %s\n    address: %s\n    username: %s\n    password: %s\n    timeout: 60s\n",
			s.name, s.url, simUser, simPass)
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
%scf:
  api: %s
  client_id: %s
  client_secret: %s
  broker_name: blacksmith
catalog:
  dirs: [%s]
reconciler:
  interval: 45s
  retry_delay: 1s
  stop_timeout: 10s
  orphan_grace_period: 1m
  run_log: 500
  remediation:
    orphan_deployments: delete
    min_age: %s
    retirement_period: %s
ha:
  enabled: true
  lease_ttl: 6s
`, d.addr, brokerUser, brokerPass, opUser, opPass, w.vault, w.token, bosh.String(), w.cc, ccClient, ccSecret,
		strconv.Quote(w.catalog), retireMinAge, retirePeriod)
	return os.WriteFile(d.config, []byte(conf), 0o600)
}

// startDaemon writes the configuration of daemon i and starts it.
func startDaemon(bin, dir string, i int, w daemonWorld) (*daemon, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("blacksmith-%d", i)
	d := &daemon{url: "http://" + addr, addr: addr, config: filepath.Join(dir, name+".conf")}
	if err := d.writeConfig(w); err != nil {
		return nil, err
	}
	if d.proc, err = newProc(dir, name, bin, "-c", d.config); err != nil {
		return nil, err
	}
	if err := d.start(); err != nil {
		return nil, err
	}
	return d, waitHTTP(d.url+"/healthz", time.Minute)
}
