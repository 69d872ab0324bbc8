package vaultcluster

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Balancer is the load balancer operators put in front of a Vault cluster:
// it asks every node's /v1/sys/health each interval and sends every request
// to the node that answered 200 (the active node). Between a leader's loss
// and the next check it still sends to the old node, as a real balancer
// does (the client sees refused connections, 502s or the standby's
// answers); with no active node it answers 503.
type Balancer struct {
	// Addr is the balancer's URL, e.g. http://127.0.0.1:41234.
	Addr string

	nodes    []*Node
	interval time.Duration
	target   atomic.Pointer[Node]
	switches atomic.Int64
	// badGateways counts the requests the target did not answer (502).
	badGateways atomic.Int64
	srv         *http.Server
	proxy       *httputil.ReverseProxy
	cancel      context.CancelFunc
	done        sync.WaitGroup
}

// newBalancer starts a balancer on a loopback port over nodes.
func newBalancer(nodes []*Node, interval time.Duration) (*Balancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &Balancer{Addr: "http://" + ln.Addr().String(), nodes: nodes, interval: interval, cancel: cancel}
	b.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u, _ := url.Parse(pr.In.Context().Value(targetKey{}).(string))
			pr.SetURL(u)
		},
		Transport: &http.Transport{DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext, MaxIdleConnsPerHost: 32},
		// A node that went away is the balancer's 502, counted, not logged.
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			b.badGateways.Add(1)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	b.check(ctx)
	b.done.Add(2)
	go func() { defer b.done.Done(); _ = b.srv.Serve(ln) }()
	go func() { defer b.done.Done(); b.loop(ctx) }()
	return b, nil
}

// targetKey carries the chosen node's URL from ServeHTTP to the proxy.
type targetKey struct{}

// ServeHTTP sends the request to the current target, or answers 503.
func (b *Balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := b.target.Load()
	if t == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"errors":["no server is available to handle this request"]}`))
		return
	}
	b.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, t.Addr)))
}

// loop checks the nodes each interval until ctx ends.
func (b *Balancer) loop(ctx context.Context) {
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.check(ctx)
		}
	}
}

// check asks every node's health at once and makes the active one the
// target (the current target while it still answers 200), none when no
// node is active.
func (b *Balancer) check(ctx context.Context) {
	codes := make([]int, len(b.nodes))
	var wg sync.WaitGroup
	for i, n := range b.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i] = n.Health(ctx, 4*b.interval) }()
	}
	wg.Wait()
	cur := b.target.Load()
	var next *Node
	for i, n := range b.nodes {
		if codes[i] == http.StatusOK && (next == nil || n == cur) {
			next = n
		}
	}
	if next != cur {
		b.target.Store(next)
		if next != nil {
			b.switches.Add(1)
		}
	}
}

// Target is the node the balancer sends requests to now, nil when none.
func (b *Balancer) Target() *Node { return b.target.Load() }

// Switches counts how often the balancer took a new active node.
func (b *Balancer) Switches() int64 { return b.switches.Load() }

// BadGateways counts the requests the balancer answered 502 because the
// node it sent them to did not answer.
func (b *Balancer) BadGateways() int64 { return b.badGateways.Load() }

// close stops the health checks and the server.
func (b *Balancer) close() {
	b.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = b.srv.Shutdown(ctx)
	_ = b.srv.Close()
	b.done.Wait()
}
