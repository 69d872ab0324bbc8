package vaultcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// Active is the node that answers its health with 200 now; an error when
// none does.
func (c *Cluster) Active(ctx context.Context) (*Node, error) {
	for _, n := range c.Nodes {
		if n.Running() && n.Health(ctx, 2*time.Second) == http.StatusOK {
			return n, nil
		}
	}
	return nil, errors.New("no active Vault node")
}

// WaitActive waits until a node is active, at most as long as ctx allows,
// and returns it.
func (c *Cluster) WaitActive(ctx context.Context) (*Node, error) {
	for {
		n, err := c.Active(ctx)
		if err == nil {
			return n, nil
		}
		if err := retry.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, fmt.Errorf("waiting for an active Vault node: %w", err)
		}
	}
}

// Seal seals n. The active node seals through its sys/seal (and steps
// down); a standby cannot ("vault cannot seal when in standby mode; please
// restart instead"), so a standby is restarted and left sealed, as a node is
// after a restart until an operator unseals it.
func (c *Cluster) Seal(ctx context.Context, n *Node) error {
	if n.Health(ctx, 2*time.Second) != http.StatusOK {
		n.Kill()
		if err := n.start(); err != nil {
			return err
		}
		return waitAnswering(ctx, n)
	}
	status, body, err := c.Do(ctx, n.Addr, http.MethodPut, "/v1/sys/seal", "")
	if err != nil || status/100 != 2 {
		return fmt.Errorf("sealing %s: %d %s %v", n.ID, status, body, err)
	}
	return nil
}

// Unseal gives n the cluster's unseal key until it is unsealed.
func (c *Cluster) Unseal(ctx context.Context, n *Node) error { return unseal(ctx, n, c.key) }

// Restart kills n (SIGKILL), starts it again on its own Raft data and
// unseals it; it returns once n is active or a standby.
func (c *Cluster) Restart(ctx context.Context, n *Node) error {
	n.Kill()
	if err := n.start(); err != nil {
		return err
	}
	if err := waitAnswering(ctx, n); err != nil {
		return err
	}
	if err := unseal(ctx, n, c.key); err != nil {
		return err
	}
	return waitServing(ctx, n)
}

// RestartAll kills every node, starts them all again on their Raft data,
// unseals them and waits until one is active: the whole cluster restarted
// from disk.
func (c *Cluster) RestartAll(ctx context.Context) error {
	for _, n := range c.Nodes {
		n.Kill()
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
		if err := unseal(ctx, n, c.key); err != nil {
			return err
		}
	}
	_, err := c.WaitActive(ctx)
	return err
}

// waitServing waits until n is active (200), or a standby (429) that
// knows its active node (sys/leader names it), as a standby that can
// forward requests is.
func waitServing(ctx context.Context, n *Node) error {
	for {
		code := n.Health(ctx, time.Second)
		if code == http.StatusOK || (code == http.StatusTooManyRequests && knowsLeader(ctx, n)) {
			return nil
		}
		if err := retry.Sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %s to serve (health %d): %w: %s", n.ID, code, err, tail(n.Log()))
		}
	}
}

// knowsLeader says whether n's sys/leader names an active node other
// than n.
func knowsLeader(ctx context.Context, n *Node) bool {
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	status, body, err := do(rctx, n.Addr, "", http.MethodGet, "/v1/sys/leader", "")
	var out struct {
		IsSelf  bool   `json:"is_self"`
		Address string `json:"leader_address"`
	}
	return err == nil && status == http.StatusOK && json.Unmarshal(body, &out) == nil && !out.IsSelf && out.Address != ""
}

// tail is the end of a node's log, for errors.
func tail(log string) string {
	if len(log) > 2000 {
		log = log[len(log)-2000:]
	}
	return strings.TrimSpace(log)
}
