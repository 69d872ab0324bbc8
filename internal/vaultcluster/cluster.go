package vaultcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"

	"github.com/blacksmith-reconciler/blacksmith/internal/vaultserver"
)

// ErrNoConfigMode says the Vault binary runs only in development mode (a
// build of ci/vault older than its configuration-file mode).
var ErrNoConfigMode = errors.New("this Vault binary runs only in development mode: rebuild it (ci/vault-bin.sh)")

// Options tunes a cluster.
type Options struct {
	// Nodes is the number of Vault nodes (default 3).
	Nodes int
	// Binary is the Vault server to run (default: internal/vaultserver's Binary).
	Binary string
	// HealthInterval is how often the balancer checks the nodes (default 250ms).
	HealthInterval time.Duration
}

// Cluster is a running Vault cluster on loopback and its balancer.
type Cluster struct {
	// Nodes are the cluster's nodes, node-1 first.
	Nodes []*Node
	// Token is the root token sys/init returned.
	Token string
	// Balancer sends requests to the active node.
	Balancer *Balancer

	key       string
	dir       string
	closeOnce sync.Once
}

// Start starts opts.Nodes nodes, initializes the cluster through the first,
// unseals every node, waits until every node is a Raft voter, mounts
// secret/ as KV version 2 (as the dev server does) and starts the balancer.
// ctx bounds the start only; the caller must Close the cluster.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Nodes <= 0 {
		opts.Nodes = 3
	}
	if opts.HealthInterval <= 0 {
		opts.HealthInterval = 250 * time.Millisecond
	}
	if opts.Binary == "" {
		bin, err := vaultserver.Binary()
		if err != nil {
			return nil, err
		}
		opts.Binary = bin
	}
	dir, err := os.MkdirTemp("", "vaultcluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	if err := c.start(ctx, opts); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// start lays out, starts, initializes and unseals the nodes.
func (c *Cluster) start(ctx context.Context, opts Options) error {
	apis, clusters := make([]string, opts.Nodes), make([]string, opts.Nodes)
	peers := make([]string, opts.Nodes)
	for i := range opts.Nodes {
		ports, err := freePorts(2)
		if err != nil {
			return err
		}
		apis[i], clusters[i] = "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
		peers[i] = "http://" + apis[i]
	}
	for i := range opts.Nodes {
		n := &Node{ID: "node-" + strconv.Itoa(i+1), Addr: peers[i], bin: opts.Binary, log: &syncBuffer{}}
		n.dir = c.dir + "/" + n.ID
		if err := n.writeConfig(apis[i], clusters[i], peers); err != nil {
			return err
		}
		c.Nodes = append(c.Nodes, n)
	}
	for _, n := range c.Nodes {
		if err := n.start(); err != nil {
			return err
		}
	}
	for _, n := range c.Nodes {
		if err := waitAnswering(ctx, n); err != nil {
			return err
		}
	}
	key, token, err := initialize(ctx, c.Nodes[0])
	if err != nil {
		return err
	}
	c.key, c.Token = key, token
	if err := unseal(ctx, c.Nodes[0], key); err != nil {
		return err
	}
	if _, err := c.WaitActive(ctx); err != nil {
		return err
	}
	// Autopilot promotes a joined node to voter once it has been healthy
	// server_stabilization_time (10s by default): 2s here, so that a spec's
	// cluster starts in seconds.
	if status, body, err := c.Do(ctx, c.Nodes[0].Addr, http.MethodPost, "/v1/sys/storage/raft/autopilot/configuration",
		`{"server_stabilization_time":"2s"}`); err != nil || status/100 != 2 {
		return fmt.Errorf("configuring autopilot: %d %s %v", status, body, err)
	}
	for _, n := range c.Nodes[1:] {
		if err := unseal(ctx, n, key); err != nil {
			return err
		}
	}
	if err := c.waitVoters(ctx); err != nil {
		return err
	}
	if err := c.mountSecret(ctx); err != nil {
		return err
	}
	c.Balancer, err = newBalancer(c.Nodes, opts.HealthInterval)
	return err
}

// waitAnswering waits until n answers its health endpoint (sealed or not).
func waitAnswering(ctx context.Context, n *Node) error {
	for n.Health(ctx, time.Second) == 0 {
		if !n.Running() {
			if strings.Contains(n.Log(), "only runs in development mode") {
				return ErrNoConfigMode
			}
			return fmt.Errorf("%s exited: %s", n.ID, n.Log())
		}
		if err := retry.Sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %s to answer: %w: %s", n.ID, err, n.Log())
		}
	}
	return nil
}

// waitVoters waits until the Raft configuration has every node as a voter
// (autopilot promotes a joined node once it has been healthy a while).
func (c *Cluster) waitVoters(ctx context.Context) error {
	const want = `"voter":true`
	for {
		status, body, err := c.Do(ctx, c.Nodes[0].Addr, http.MethodGet, "/v1/sys/storage/raft/configuration", "")
		if err == nil && status == http.StatusOK && strings.Count(string(body), want) == len(c.Nodes) {
			return nil
		}
		if err := retry.Sleep(ctx, 250*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %d Raft voters: %w (last: %d %s)", len(c.Nodes), err, status, body)
		}
	}
}

// mountSecret mounts secret/ as KV version 2 and waits until a write there
// succeeds (KV v2 upgrades its storage after the mount).
func (c *Cluster) mountSecret(ctx context.Context) error {
	status, body, err := c.Do(ctx, c.Nodes[0].Addr, http.MethodPost, "/v1/sys/mounts/secret", `{"type":"kv","options":{"version":"2"}}`)
	if err != nil || status/100 != 2 {
		return fmt.Errorf("mounting secret/: %d %s %v", status, body, err)
	}
	for {
		status, body, err = c.Do(ctx, c.Nodes[0].Addr, http.MethodPut, "/v1/secret/data/vaultcluster-ready", `{"data":{"ready":"yes"}}`)
		if err == nil && status == http.StatusOK {
			return nil
		}
		if err := retry.Sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("writing to secret/: %w (last: %d %s)", err, status, body)
		}
	}
}

// freePorts returns count distinct free loopback ports.
func freePorts(count int) ([]int, error) {
	var ports []int
	for range count {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Addr is the balancer's URL: where the daemon points as operators point it.
func (c *Cluster) Addr() string { return c.Balancer.Addr }

// Close stops the balancer, kills every node and removes their directories.
// Safe to call more than once.
func (c *Cluster) Close() {
	c.closeOnce.Do(func() {
		if c.Balancer != nil {
			c.Balancer.close()
		}
		for _, n := range c.Nodes {
			n.Kill()
		}
		_ = os.RemoveAll(c.dir)
	})
}
