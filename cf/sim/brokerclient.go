package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// What the simulator sends a broker, as CC's v2 HttpClient does.
const (
	brokerAPIVersion = "2.15" // config/osbapi_version
	// brokerUserAgent is the User-Agent of the httpclient gem CC uses
	// (HTTPClient/1.0 (VERSION, RUBY_VERSION_STRING)), at CC's versions.
	brokerUserAgent = "HTTPClient/1.0 (2.9.0, ruby 3.3.11)"
	brokerTimeout   = 30 * time.Second
	maxCatalogBytes = 1 << 20
)

// brokerClient asks brokers for their catalogs; it reaches loopback addresses only.
type brokerClient struct {
	http         *http.Client
	infoLocation string // X-Api-Info-Location: the simulator's root document
}

func newBrokerClient(apiURL string) *brokerClient {
	d := &net.Dialer{Timeout: brokerTimeout, Control: loopbackOnly}
	tr := &http.Transport{DialContext: d.DialContext, Proxy: nil, ResponseHeaderTimeout: brokerTimeout}
	return &brokerClient{http: &http.Client{Transport: tr, Timeout: brokerTimeout}, infoLocation: strings.TrimPrefix(apiURL, "http://") + "/"}
}

// loopbackOnly refuses a connection to any address but a loopback one,
// whatever a name resolved to or a redirect pointed at.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("cf/sim connects to loopback addresses only, not %s", address)
	}
	return nil
}

// isLoopbackURL: http(s)://127.x.x.x, [::1] or localhost.
func isLoopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// fetchCatalog is GET {url}/v2/catalog; a failure is the error CC's job records.
func (c *brokerClient) fetchCatalog(ctx context.Context, b Broker) (catalog, *cfError) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(b.URL, "/")+"/v2/catalog", nil)
	if err != nil {
		return catalog{}, &errBrokerUnreachable
	}
	c.prepare(req, b)
	res, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return catalog{}, &errBrokerTimeout
		}
		return catalog{}, &errBrokerUnreachable
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxCatalogBytes+1))
	if err != nil || len(body) > maxCatalogBytes {
		return catalog{}, &errBrokerUnreachable
	}
	if e := statusError(res, body); e != nil {
		return catalog{}, e
	}
	return parseCatalog(body)
}

// prepare adds what CC's HttpClient sends every broker: basic auth and its default headers.
func (c *brokerClient) prepare(req *http.Request, b Broker) {
	req.SetBasicAuth(b.auth.username, b.auth.password)
	req.Header.Set("X-Broker-Api-Version", brokerAPIVersion)
	req.Header.Set("X-Vcap-Request-Id", newUUID())
	req.Header.Set("X-Broker-API-Request-Identity", newUUID())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Api-Info-Location", c.infoLocation)
	req.Header.Set("User-Agent", brokerUserAgent)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// statusError maps a broker's status as CC's CommonErrorValidator does.
func statusError(res *http.Response, body []byte) *cfError {
	switch code := res.StatusCode; {
	case code == http.StatusUnauthorized:
		return &errBrokerAuthFailed
	case code == http.StatusRequestTimeout:
		return &errBrokerTimeout
	case code >= 400 && code < 500:
		e := brokerRejected(fmt.Sprintf("%d %s", code, http.StatusText(code)))
		return &e
	case code >= 500 || code == http.StatusCreated || code == http.StatusAccepted:
		e := brokerBadResponse(res.StatusCode, body)
		return &e
	case code != http.StatusOK:
		return &errBrokerMalformed
	}
	return nil
}

func parseCatalog(body []byte) (catalog, *cfError) {
	var object map[string]json.RawMessage
	if json.Unmarshal(body, &object) != nil || object == nil {
		return catalog{}, &errBrokerMalformed
	}
	var c catalog
	if err := json.Unmarshal(body, &c); err != nil {
		e := catalogInvalid([]string{err.Error()})
		return catalog{}, &e
	}
	if p := c.problems(); len(p) > 0 {
		e := catalogInvalid(p)
		return catalog{}, &e
	}
	return c, nil
}
