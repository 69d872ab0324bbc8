package reconciler_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// vaultProxy forwards to the real Vault and fails the requests its rules pick.
type vaultProxy struct {
	*httptest.Server
	mu    sync.Mutex
	rules []*fault
}

// fault answers 500 to the writes (any method but GET) whose path contains
// part, the next left times (-1: always); hits records when each came.
type fault struct {
	part string
	left int
	hits []time.Time
}

func newVaultProxy(target string) *vaultProxy {
	u, err := url.Parse(target)
	Expect(err).NotTo(HaveOccurred())
	p := &vaultProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.pick(r) {
			_, _ = io.Copy(io.Discard, r.Body)
			http.Error(w, `{"errors":["injected failure"]}`, http.StatusInternalServerError)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	DeferCleanup(p.Close)
	return p
}

// failWrites adds a rule and returns it (to read its hits).
func (p *vaultProxy) failWrites(part string, times int) *fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := &fault{part: part, left: times}
	p.rules = append(p.rules, f)
	return f
}

// heal removes every rule.
func (p *vaultProxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

func (p *vaultProxy) pick(r *http.Request) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.Method == http.MethodGet {
		return false
	}
	for _, f := range p.rules {
		if !strings.Contains(r.URL.Path, f.part) {
			continue
		}
		f.hits = append(f.hits, time.Now())
		if f.left == 0 {
			return false
		}
		if f.left > 0 {
			f.left--
		}
		return true
	}
	return false
}

// hitTimes returns when the rule's requests came.
func (p *vaultProxy) hitTimes(f *fault) []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), f.hits...)
}
