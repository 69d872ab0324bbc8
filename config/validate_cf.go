package config

import (
	"net/url"
	"reflect"
	"time"
)

// MinCFCheckInterval is the shortest cf.check_interval but 0 (every run).
const MinCFCheckInterval = time.Minute

// validateCF checks the cf section when cf.api is set. Without cf.api nothing
// reads the platform: any other cf key set is a problem, and so is deleting
// orphan deployments (without the platform's view, none is one).
func validateCF(c *Config, ck checker) {
	cf := c.CF
	if !cf.Enabled() {
		if c.Reconciler.Remediation.OrphanDeployments == OrphanDeploymentsDelete {
			ck.fail("reconciler.remediation.orphan_deployments",
				"needs cf.api: without the platform's view nothing is an orphan deployment")
		}
		strayCF(cf, ck)
		return
	}
	checkCFAPI(cf.API, ck)
	ck.requiredWhen("cf.client_id", cf.ClientID, "cf.api")
	ck.requiredWhen("cf.client_secret", cf.ClientSecret, "cf.api")
	ck.requiredWhen("cf.broker_name", cf.BrokerName, "cf.api")
	ck.caCert("cf.ca_cert", cf.CACert, true)
	ck.notNegative("cf.check_interval", cf.CheckInterval)
	if cf.CheckInterval > 0 && cf.CheckInterval < MinCFCheckInterval {
		ck.fail("cf.check_interval", "must be 0 (every run) or at least 1m, got %s", cf.CheckInterval)
	}
	ck.positive("cf.timeout", cf.Timeout)
}

// strayCF names every cf key set to other than its default while cf.api is not.
func strayCF(cf CFConfig, ck checker) {
	v, def := reflect.ValueOf(cf), reflect.ValueOf(Default().CF)
	for i := range v.NumField() {
		if !v.Field(i).Equal(def.Field(i)) {
			ck.fail("cf."+yamlKey(v.Type().Field(i)), "needs cf.api: without it nothing reads the platform")
		}
	}
}

// checkCFAPI checks cf.api as the Cloud Controller client takes it: the API's
// root, http(s)://host[:port], without user info, path, query or fragment.
// Like checkWebhookURL, the problem never quotes the URL (it could hold a password).
func checkCFAPI(raw string, ck checker) {
	const key = "cf.api"
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		ck.fail(key, "not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		ck.fail(key, "scheme must be http or https, got %q", u.Scheme)
	case u.Host == "":
		ck.fail(key, "no host")
	case u.User != nil:
		ck.fail(key, "must not hold user info (cf.client_id and cf.client_secret authenticate)")
	case u.Path != "" && u.Path != "/":
		ck.fail(key, "must be the API's root (http(s)://host[:port]), without a path")
	case u.RawQuery != "" || u.ForceQuery:
		ck.fail(key, "must not have a query")
	case u.Fragment != "":
		ck.fail(key, "must not have a fragment")
	}
}
