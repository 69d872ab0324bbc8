package config

import (
	"crypto/tls"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// normalize tidies values that have several spellings for one meaning.
func normalize(c *Config) {
	c.Vault.Mount = strings.Trim(c.Vault.Mount, "/")
	c.Reconciler.Backup.Path = strings.Trim(c.Reconciler.Backup.Path, "/")
	c.BOSH.Address = boshAddress(c.BOSH.Address)
	for i := range c.MoreDirectors {
		c.MoreDirectors[i].Address = boshAddress(c.MoreDirectors[i].Address)
	}
}

// boshAddress turns a bare host or host:port into a URL as the bosh CLI does:
// https, port 25555 unless given. A value with a scheme is kept as is.
func boshAddress(a string) string {
	if a == "" || strings.Contains(a, "://") {
		return a
	}
	if _, _, err := net.SplitHostPort(a); err != nil {
		a = net.JoinHostPort(strings.Trim(a, "[]"), "25555")
	}
	return "https://" + a
}

func validate(c *Config, ck checker) {
	validateBroker(c.Broker, ck)
	validateOperator(c.Operator, c.Broker, ck)
	validateVault(c.Vault, ck)
	validateDirectors(c, ck)
	for i, dir := range c.Catalog.Dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			ck.fail(fmt.Sprintf("catalog.dirs[%d]", i), "not a directory: %q", dir)
		}
	}
	ck.pair("metrics.username", c.Metrics.Username, "metrics.password", c.Metrics.Password)
	validateReconciler(c.Reconciler, ck)
	validateNotifications(c.Notifications, ck)
	if c.HA.Enabled {
		if c.HA.LeaseTTL < 3*time.Second {
			ck.fail("ha.lease_ttl", "must be at least 3s, got %s", c.HA.LeaseTTL)
		}
		if c.Vault.KVVersion == 1 {
			ck.fail("ha.enabled", "needs a KV v2 mount (check-and-set); vault.kv_version is 1")
		}
		if len(c.HA.ID) > 128 {
			ck.fail("ha.id", "at most 128 characters")
		}
	}
	validateCF(c, ck)
}

func validateNotifications(n NotificationsConfig, ck checker) {
	ck.pair("notifications.webhook_url", n.WebhookURL, "notifications.webhook_secret", n.WebhookSecret)
	if n.WebhookURL != "" {
		checkWebhookURL("notifications.webhook_url", n.WebhookURL, ck)
	}
	for i, w := range n.Webhooks {
		key := fmt.Sprintf("notifications.webhooks[%d]", i)
		if w.URL == "" {
			ck.fail(key+".url", "required")
		} else {
			checkWebhookURL(key+".url", w.URL, ck)
		}
		if w.Secret == "" {
			ck.fail(key+".secret", "required: every delivery is signed with it")
		}
		for j, e := range w.Events {
			if !slices.Contains(WebhookEvents, e) {
				ck.fail(fmt.Sprintf("%s.events[%d]", key, j), "unknown event %q (one of %s)", e, strings.Join(WebhookEvents, ", "))
			}
		}
	}
}

// checkWebhookURL checks an http(s) URL without user info or fragment (the
// problem names the key, never the URL's query, which may hold a token).
func checkWebhookURL(key, raw string, ck checker) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		ck.fail(key, "not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		ck.fail(key, "scheme must be http or https, got %q", u.Scheme)
	case u.Host == "":
		ck.fail(key, "no host")
	case u.User != nil:
		ck.fail(key, "must not hold user info (use the secret to sign)")
	case u.Fragment != "":
		ck.fail(key, "must not have a fragment")
	}
}

// validateOperator wants the operator's admin credentials, a viewer's only
// whole, and every user name apart from the broker's and each other's: the
// platform's credentials must never open the operator's API, and a user name
// has one role.
func validateOperator(o OperatorConfig, b BrokerConfig, ck checker) {
	ck.required("operator.admin.username", o.Admin.Username)
	ck.required("operator.admin.password", o.Admin.Password)
	ck.pair("operator.viewer.username", o.Viewer.Username, "operator.viewer.password", o.Viewer.Password)
	users := []struct{ key, name string }{{"broker.username", b.Username}, {"operator.admin.username", o.Admin.Username},
		{"operator.viewer.username", o.Viewer.Username}}
	for i, u := range users {
		for _, v := range users[:i] {
			if u.name != "" && u.name == v.name {
				ck.fail(u.key, "must differ from %s: each user name has one role", v.key)
			}
		}
	}
}

func validateBroker(b BrokerConfig, ck checker) {
	if !isHostPort(b.Listen) {
		ck.fail("broker.listen", "not a host:port: %q", b.Listen)
	}
	ck.required("broker.username", b.Username)
	ck.required("broker.password", b.Password)
	ck.atLeast("broker.max_body_bytes", b.MaxBodyBytes, 1024)
	ck.atLeast("broker.max_parameters_bytes", b.MaxParametersBytes, 2)
	if b.MaxParametersBytes > b.MaxBodyBytes && b.MaxBodyBytes >= 1024 {
		ck.fail("broker.max_parameters_bytes", "must not exceed broker.max_body_bytes (%d), got %d", b.MaxBodyBytes, b.MaxParametersBytes)
	}
	ck.between("broker.max_parameters_depth", b.MaxParametersDepth, 1, 100)
	ck.between("broker.max_id_length", b.MaxIDLength, 36, 255)
	ck.positive("broker.read_timeout", b.ReadTimeout)
	ck.positive("broker.write_timeout", b.WriteTimeout)
	ck.positive("broker.idle_timeout", b.IdleTimeout)
	if !b.TLS.Enabled {
		return
	}
	ck.required("broker.tls.cert", b.TLS.Cert)
	ck.required("broker.tls.key", b.TLS.Key)
	if b.TLS.Cert != "" && b.TLS.Key != "" {
		if _, err := tls.LoadX509KeyPair(b.TLS.Cert, b.TLS.Key); err != nil {
			ck.fail("broker.tls.cert", "loading certificate and key: %v", err)
		}
	}
}

func validateVault(v VaultConfig, ck checker) {
	ck.required("vault.address", v.Address)
	if v.Address != "" && !isHTTPURL(v.Address) {
		ck.fail("vault.address", "not an http(s) URL: %q", v.Address)
	}
	ck.required("vault.mount", v.Mount)
	if v.KVVersion < 0 || v.KVVersion > 2 {
		ck.fail("vault.kv_version", "must be 1, 2 or 0 (detect), got %d", v.KVVersion)
	}
	ck.caCert("vault.ca_cert", v.CACert, false)
	ck.between("vault.max_record_bytes", v.MaxRecordBytes, 1024, 1<<20)
}

// validateDirectors checks every Director; with a list, keys are named
// bosh[i] and every Director needs a name of its own.
func validateDirectors(c *Config, ck checker) {
	if len(c.MoreDirectors) == 0 {
		validateBOSH("bosh", c.BOSH, ck)
		return
	}
	seen := map[string]int{}
	for i, b := range c.Directors() {
		prefix := fmt.Sprintf("bosh[%d]", i)
		validateBOSH(prefix, b, ck)
		if first, dup := seen[b.Name]; dup && b.Name != "" {
			ck.fail(prefix+".name", "%q is the name of bosh[%d] already: each Director needs its own", b.Name, first)
		}
		seen[b.Name] = i
	}
}

// directorName is what a Director's name may hold: it goes into metrics
// labels, logs, index records and the name of its feed's state document in
// Vault ("events-" and the name: at most 64 of [a-z0-9_-]).
var directorName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,56}$`)

func validateBOSH(prefix string, b BOSHConfig, ck checker) {
	key := func(k string) string { return prefix + "." + k }
	switch {
	case b.Name == "":
		ck.fail(key("name"), "required: each Director of a list needs its own name")
	case !directorName.MatchString(b.Name):
		ck.fail(key("name"), "must be 1 to 57 lowercase letters, digits, '_' or '-', starting with a letter or digit; got %q", b.Name)
	}
	ck.required(key("address"), b.Address)
	if b.Address != "" && !isHTTPURL(b.Address) {
		ck.fail(key("address"), "not an http(s) URL or host[:port]: %q", b.Address)
	}
	ck.pair(key("username"), b.Username, key("password"), b.Password)
	ck.pair(key("client_id"), b.ClientID, key("client_secret"), b.ClientSecret)
	ck.caCert(key("ca_cert"), b.CACert, true)
	ck.positive(key("timeout"), b.Timeout)
	if b.RateLimit < 0 || math.IsNaN(b.RateLimit) {
		ck.fail(key("rate_limit"), "must not be negative, got %g", b.RateLimit)
	}
	ck.atLeast(key("rate_burst"), b.RateBurst, 1)
	ck.atLeast(key("max_in_flight"), b.MaxInFlight, 1)
}

func isHostPort(s string) bool {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	_, err = strconv.ParseUint(port, 10, 16)
	return err == nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
