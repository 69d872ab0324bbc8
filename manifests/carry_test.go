package manifests_test

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// secretKeys are the keys check-config prints as <redacted> when set.
var secretKeys = []string{"broker.password", "vault.token", "bosh.password", "bosh.client_secret", "cf.client_secret",
	"metrics.password", "notifications.webhook_secret", "operator.admin.password", "operator.viewer.password"}

// pemFiles are the properties whose PEM text the job writes to a file of its
// config/ folder, and the daemon reads from there.
var pemFiles = map[string]string{
	"broker.tls.cert": "config/broker-tls.crt",
	"broker.tls.key":  "config/broker-tls.key",
	"vault.ca_cert":   "config/vault-ca.pem",
	"bosh.ca_cert":    "config/director-ca.pem",
	"cf.ca_cert":      "config/cf-ca.pem",
}

// expectCarried checks that every property of the job spec reaches the
// daemon's effective configuration (check-config's output) with the value
// props give it, or its spec default: nothing a manifest sets is dropped.
func (vm *fakeVM) expectCarried(spec jobSpec, props, effective map[string]any) {
	GinkgoHelper()
	more := []any{}
	if list, ok := effective["bosh"].([]any); ok { // several Directors: the first is bosh.*
		Expect(list).NotTo(BeEmpty())
		effective = maps.Clone(effective)
		effective["bosh"], more = list[0], list[1:]
	}
	for _, key := range slices.Sorted(maps.Keys(spec.Properties)) {
		if key == "bosh.more_directors" { // each further Director, its secret redacted
			given, _ := lookup(props, key)
			list, _ := given.([]any)
			var redacted []any
			for _, d := range list {
				dir := maps.Clone(d.(map[string]any))
				dir["client_secret"] = "<redacted>"
				redacted = append(redacted, dir)
			}
			Expect(more).To(HaveLen(len(redacted)), key)
			Expect(sameValue(append([]any{}, redacted...), more)).To(BeTrue(), "%s: the manifest says %#v, the daemon has %#v", key, redacted, more)
			continue
		}
		if key == "memory_limit" { // the daemon's environment, not its configuration
			given, set := lookup(props, key)
			env := vm.bpmEnv()
			if set && given != nil {
				Expect(env).To(HaveKeyWithValue("GOMEMLIMIT", given), key)
			} else {
				Expect(env).NotTo(HaveKey("GOMEMLIMIT"), key)
			}
			continue
		}
		want, set := lookup(props, key)
		if !set || want == nil {
			want = spec.Properties[key]["default"]
		}
		got, ok := lookup(effective, key)
		Expect(ok).To(BeTrue(), "check-config's output lacks %s", key)
		switch file, isPEM := pemFiles[key]; {
		case slices.Contains(secretKeys, key) && want != "":
			Expect(got).To(Equal("<redacted>"), key)
		case isPEM && strings.Contains(fmt.Sprint(want), "-----BEGIN"):
			Expect(got).To(Equal(vm.jobFile(file)), key)
			Expect(os.ReadFile(vm.jobFile(file))).To(WithTransform(func(b []byte) string {
				return strings.TrimSpace(string(b))
			}, Equal(strings.TrimSpace(fmt.Sprint(want)))), key)
		case key == "notifications.webhooks": // each secret redacted, the rest carried
			redacted := []any{}
			hooks, _ := lookup(props, key)
			list, _ := hooks.([]any)
			for _, w := range list {
				hook := maps.Clone(w.(map[string]any))
				hook["secret"] = "<redacted>"
				redacted = append(redacted, hook)
			}
			Expect(sameValue(redacted, got)).To(BeTrue(), "%s: the manifest says %#v, the daemon has %#v", key, redacted, got)
		case key == "catalog.dirs":
			var copies []any
			for i := range lookupList(props, key) {
				copies = append(copies, vm.path(fmt.Sprintf("/var/vcap/data/blacksmith/catalog/%d", i)))
			}
			Expect(got).To(ConsistOf(copies...), key)
		default:
			Expect(sameValue(want, got)).To(BeTrue(), "%s: the manifest says %#v, the daemon has %#v", key, want, got)
		}
	}
}

// sameValue compares a property's value with the daemon's: numbers by value,
// durations by length (1h and 60m are one value), maps and lists item by item.
func sameValue(want, got any) bool {
	if wn, ok := number(want); ok {
		gn, ok := number(got)
		return ok && wn == gn
	}
	switch w := want.(type) {
	case string:
		g, ok := got.(string)
		if !ok {
			return false
		}
		wd, errW := time.ParseDuration(w)
		gd, errG := time.ParseDuration(g)
		return w == g || (errW == nil && errG == nil && wd == gd)
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) < len(w) {
			return false
		}
		for k, v := range w {
			if !sameValue(v, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// bpmEnv is the environment the job's bpm.yml gives the daemon.
func (vm *fakeVM) bpmEnv() map[string]string {
	GinkgoHelper()
	return bpmProcessAt(vm.jobFile("config/bpm.yml")).Env
}
