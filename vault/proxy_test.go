package vault_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// proxy is a loopback HTTP proxy in front of the real Vault that can fail
// chosen requests; the Vault behind it stays real.
type proxy struct {
	srv    *httptest.Server
	mu     sync.Mutex
	fault  func(w http.ResponseWriter, r *http.Request) bool // true: handled, not forwarded
	writes atomic.Int64                                      // PUT/POST/DELETE forwarded under /v1/{mount}/
	mount  string
	// Requests whose path holds slowPath are held slow before they are
	// forwarded; most is the most of them in flight at once.
	slowPath       string
	slow           time.Duration
	inFlight, most atomic.Int64
}

func newProxy(target, mount string) *proxy {
	GinkgoHelper()
	u, err := url.Parse(target)
	Expect(err).NotTo(HaveOccurred())
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &proxy{mount: mount}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		fault := p.fault
		p.mu.Unlock()
		if fault != nil && fault(w, r) {
			return
		}
		if r.Method != http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/"+p.mount+"/") {
			p.writes.Add(1)
		}
		if p.slowPath != "" && strings.Contains(r.URL.Path, p.slowPath) {
			n := p.inFlight.Add(1)
			defer p.inFlight.Add(-1)
			for m := p.most.Load(); n > m && !p.most.CompareAndSwap(m, n); m = p.most.Load() {
			}
			time.Sleep(p.slow) // the fault itself (a slow Vault), so that requests sent at once overlap: no wait for a state
		}
		rp.ServeHTTP(w, r)
	}))
	DeferCleanup(p.srv.Close)
	return p
}

func (p *proxy) URL() string { return p.srv.URL }

func (p *proxy) setFault(f func(w http.ResponseWriter, r *http.Request) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = f
}

// failGET answers every GET whose path ends with suffix with the given status
// and body, without asking Vault.
func failGET(suffix string, status int, body string) func(http.ResponseWriter, *http.Request) bool {
	return failRequest(http.MethodGet, suffix, status, body)
}

// failRequest answers every request of method whose path ends with suffix
// with the given status and body, without asking Vault.
func failRequest(method, suffix string, status int, body string) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != method || !strings.HasSuffix(r.URL.Path, suffix) {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
		return true
	}
}
