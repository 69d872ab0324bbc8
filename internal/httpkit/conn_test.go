package httpkit_test

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpkit"
)

// counted is one call of Options.Count.
type counted struct {
	method, endpoint string
	status           int
}

// counter records Options.Count's calls.
type counter struct {
	mu    sync.Mutex
	calls []counted
}

func (c *counter) count(method, endpoint string, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, counted{method, endpoint, status})
}

func (c *counter) all() []counted {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]counted(nil), c.calls...)
}

// newConn returns a Conn with o, failing the spec on an error.
func newConn(o httpkit.Options) *httpkit.Conn {
	c, err := httpkit.New(o)
	Expect(err).NotTo(HaveOccurred())
	return c
}

// get is a GET of u.
func get(ctx context.Context, u string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	Expect(err).NotTo(HaveOccurred())
	return req
}

var _ = Describe("Conn", func() {
	Describe("an answer's bound", func() {
		// body answers n bytes, with a Content-Length when sized, else chunked.
		body := func(n int, sized bool) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) {
				if sized {
					w.Header().Set("Content-Length", strconv.Itoa(n))
				}
				w.WriteHeader(http.StatusOK)
				if !sized {
					w.(http.Flusher).Flush() // no Content-Length from here on
				}
				_, _ = w.Write([]byte(strings.Repeat("x", n)))
			}
		}
		DescribeTable("reads an answer up to the bound, and no longer one",
			func(n int, sized, tooLarge bool) {
				srv := httptest.NewServer(body(n, sized))
				DeferCleanup(srv.Close)
				a, err := newConn(httpkit.Options{}).Send(context.Background(), get(context.Background(), srv.URL), "/x", 10)
				if !tooLarge {
					Expect(err).NotTo(HaveOccurred())
					Expect(a.Status).To(Equal(http.StatusOK))
					Expect(a.Body).To(HaveLen(n))
					return
				}
				var big *httpkit.TooLargeError
				Expect(errors.As(err, &big)).To(BeTrue(), "error %v", err)
				Expect(*big).To(Equal(httpkit.TooLargeError{Method: "GET", Endpoint: "/x", Limit: 10}))
				Expect(err).To(MatchError("the answer to GET /x is over 10 bytes"))
				Expect(a.Body).To(BeNil())
			},
			Entry("empty", 0, true, false),
			Entry("at the bound, sized", 10, true, false),
			Entry("at the bound, chunked", 10, false, false),
			Entry("a byte over, sized", 11, true, true),
			Entry("a byte over, chunked", 11, false, true),
			Entry("far over, chunked", 1<<20, false, true),
		)

		It("does not read an answer whose Content-Length is over the bound", func() {
			stop := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", strconv.Itoa(1<<30))
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write([]byte("x"))
				w.(http.Flusher).Flush()
				select { // the rest never comes while the spec runs
				case <-stop:
				case <-r.Context().Done():
				}
			}))
			DeferCleanup(srv.Close)
			DeferCleanup(func() { close(stop) })
			done := make(chan error, 1)
			go func() {
				_, err := newConn(httpkit.Options{}).Send(context.Background(), get(context.Background(), srv.URL), "/x", 1<<20)
				done <- err
			}()
			var err error
			Eventually(done, "20s").Should(Receive(&err))
			Expect(err).To(MatchError("the answer to GET /x is over 1048576 bytes"))
		})
	})

	It("counts each request, with status 0 when it got no answer", func() {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusTeapot)
		}))
		gone := httptest.NewServer(http.NotFoundHandler())
		gone.Close() // nothing listens there any more
		DeferCleanup(srv.Close)
		var n counter
		c := newConn(httpkit.Options{Count: n.count})
		a, err := c.Send(context.Background(), get(context.Background(), srv.URL+"/things/1"), "/things/:id", 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Status).To(Equal(http.StatusTeapot))
		_, err = c.RoundTrip(get(context.Background(), gone.URL), "/gone", 10)
		Expect(err).To(HaveOccurred())
		var big *httpkit.TooLargeError
		Expect(errors.As(err, &big)).To(BeFalse())
		Expect(errors.Is(err, httpkit.ErrNoSlot)).To(BeFalse())
		Expect(n.all()).To(Equal([]counted{{"GET", "/things/:id", http.StatusTeapot}, {"GET", "/gone", 0}}))
	})

	It("has at most MaxInFlight requests in flight through Send, and waits for a slot no longer than its context", func() {
		arrived, release := make(chan struct{}, 2), make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		DeferCleanup(srv.Close)
		c := newConn(httpkit.Options{MaxInFlight: 1})
		first := make(chan error, 1)
		go func() {
			_, err := c.Send(context.Background(), get(context.Background(), srv.URL), "/slow", 10)
			first <- err
		}()
		Eventually(arrived, "20s").Should(Receive())

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Send(ctx, get(context.Background(), srv.URL), "/slow", 10)
		Expect(err).To(MatchError(httpkit.ErrNoSlot))
		Expect(err).To(MatchError(context.Canceled))
		Expect(err).To(MatchError("waiting for a free request slot: context canceled"))
		Consistently(arrived).ShouldNot(Receive(), "the second request was sent")

		second := make(chan error, 1)
		go func() { // RoundTrip takes no slot
			_, err := c.RoundTrip(get(context.Background(), srv.URL), "/slow", 10)
			second <- err
		}()
		Eventually(arrived, "20s").Should(Receive())
		close(release)
		Eventually(first, "20s").Should(Receive(BeNil()))
		Eventually(second, "20s").Should(Receive(BeNil()))
		_, err = c.Send(context.Background(), get(context.Background(), srv.URL), "/slow", 10)
		Expect(err).NotTo(HaveOccurred(), "the slot was given back")
	})

	It("does not follow a redirect", func() {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Location", "http://elsewhere.invalid/tasks/7")
			w.WriteHeader(http.StatusFound)
		}))
		DeferCleanup(srv.Close)
		a, err := newConn(httpkit.Options{}).Send(context.Background(), get(context.Background(), srv.URL), "/x", 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Status).To(Equal(http.StatusFound))
		Expect(a.Header.Get("Location")).To(Equal("http://elsewhere.invalid/tasks/7"))
	})

	It("bounds each request by Timeout", func() {
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // never answers
		}))
		DeferCleanup(srv.Close)
		c := newConn(httpkit.Options{Timeout: 100 * time.Millisecond})
		_, err := c.Send(context.Background(), get(context.Background(), srv.URL), "/x", 10)
		var ue *url.Error
		Expect(errors.As(err, &ue)).To(BeTrue(), "error %v", err)
		Expect(ue.Timeout()).To(BeTrue())
	})

	It("sends through Proxy when one is given, else straight to the server", func() {
		var proxied sync.Map
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			proxied.Store(r.URL.String(), true)
			w.WriteHeader(http.StatusNoContent)
		}))
		DeferCleanup(proxy.Close)
		through := newConn(httpkit.Options{Proxy: func(*http.Request) (*url.URL, error) { return url.Parse(proxy.URL) }})
		a, err := through.Send(context.Background(), get(context.Background(), "http://server.invalid/x"), "/x", 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Status).To(Equal(http.StatusNoContent))
		_, ok := proxied.Load("http://server.invalid/x")
		Expect(ok).To(BeTrue())

		GinkgoT().Setenv("HTTP_PROXY", proxy.URL) // not used: no Proxy given
		_, err = newConn(httpkit.Options{}).Send(context.Background(), get(context.Background(), "http://other.invalid/x"), "/x", 10)
		Expect(err).To(HaveOccurred())
		_, ok = proxied.Load("http://other.invalid/x")
		Expect(ok).To(BeFalse())
	})

	Describe("TLS", func() {
		var srv *httptest.Server
		BeforeEach(func() {
			srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusNoContent)
			}))
			DeferCleanup(srv.Close)
		})
		caPEM := func() string {
			return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
		}
		send := func(o httpkit.Options) error {
			_, err := newConn(o).Send(context.Background(), get(context.Background(), srv.URL), "/x", 10)
			return err
		}

		It("verifies the server against CACert", func() {
			Expect(send(httpkit.Options{CACert: caPEM()})).To(Succeed())
		})
		It("refuses a server no CA it trusts signed", func() {
			Expect(send(httpkit.Options{})).To(MatchError(ContainSubstring("certificate")))
		})
		It("verifies nothing with SkipSSLValidation", func() {
			Expect(send(httpkit.Options{SkipSSLValidation: true})).To(Succeed())
		})
		It("refuses a CACert that holds no PEM certificate", func() {
			_, err := httpkit.New(httpkit.Options{CACert: "junk"})
			Expect(err).To(MatchError(httpkit.ErrNoPEM))
		})
	})
})
