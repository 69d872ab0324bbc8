package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// leaders are the daemons of ds that say they lead. Never pass a paused
// daemon: its status would not answer.
func leaders(ds []*daemon) []*daemon {
	GinkgoHelper()
	var out []*daemon
	for _, d := range ds {
		if d.session.ExitCode() == -1 && d.ha().Leader {
			out = append(out, d)
		}
	}
	return out
}

// without is ds less d.
func without(ds []*daemon, d *daemon) []*daemon {
	return slices.DeleteFunc(slices.Clone(ds), func(x *daemon) bool { return x == d })
}

var runStarted = regexp.MustCompile(`msg="reconciler run started"[^\n]*? run=([0-9a-f]+)`)

// runsStarted are the ids of the runs d's log says it started, in order.
func runsStarted(d *daemon) []string {
	var ids []string
	for _, m := range runStarted.FindAllStringSubmatch(string(d.session.Err.Contents()), -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// seedDeployment puts one deployment of a catalog plan on the simulator
// (properties.blacksmith names a fresh instance id, which the reconciler
// adopts) and returns that instance id; the deployment and the instance's
// records go when the spec ends.
func seedDeployment() string {
	GinkgoHelper()
	const plan = `{"service_id": "redis", "plan_id": "redis-small", "release": "redis", "version": "16.1.0", "instances": 1}`
	req, err := http.NewRequest(http.MethodPost, directorURL+"/_sim/seed", strings.NewReader(`{"count": 1, "plans": [`+plan+`]}`))
	Expect(err).NotTo(HaveOccurred())
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	Expect(res.StatusCode).To(Equal(http.StatusOK))
	var seeded struct{ Names []string }
	Expect(json.NewDecoder(res.Body).Decode(&seeded)).To(Succeed())
	Expect(seeded.Names).To(HaveLen(1))
	name := seeded.Names[0]
	id, ok := strings.CutPrefix(name, "redis-small-") // {plan id}-{uuid}: the uuid is the instance id
	Expect(ok).To(BeTrue(), name)
	DeferCleanup(func() {
		simAdmin(http.MethodDelete, "/_sim/deployments/"+name, nil)
		_, err := store.RemoveAll(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
	})
	return id
}

// vaultVersions is every document under the mount but the leases (the
// leader renews its lease every third of the TTL), each with its current
// version and when it last changed.
func vaultVersions() map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	var walk func(prefix string)
	walk = func(prefix string) {
		var list struct {
			Data struct{ Keys []string } `json:"data"`
		}
		if !vaultGet("LIST", prefix, &list) {
			return
		}
		for _, k := range list.Data.Keys {
			switch p := prefix + k; {
			case p == "blacksmith/leases/":
			case strings.HasSuffix(k, "/"):
				walk(p)
			default:
				var md struct {
					Data struct {
						CurrentVersion int    `json:"current_version"`
						UpdatedTime    string `json:"updated_time"`
					} `json:"data"`
				}
				if vaultGet(http.MethodGet, p, &md) {
					out[p] = fmt.Sprintf("version %d at %s", md.Data.CurrentVersion, md.Data.UpdatedTime)
				}
			}
		}
	}
	walk("")
	return out
}

// vaultGet reads (GET or LIST) the KV v2 metadata at path into v; false when absent.
func vaultGet(method, path string, v any) bool {
	GinkgoHelper()
	code, body, err := vaultServer.Do(method, "/v1/secret/metadata/"+path, "")
	Expect(err).NotTo(HaveOccurred())
	if code == http.StatusNotFound {
		return false
	}
	Expect(code).To(Equal(http.StatusOK), string(body))
	Expect(json.Unmarshal(body, v)).To(Succeed())
	return true
}

// vaultChanges lists the documents that differ between two vaultVersions.
func vaultChanges(before, after map[string]string) []string {
	var out []string
	for p, v := range after {
		if before[p] != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", p, before[p], v))
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p+": deleted")
		}
	}
	slices.Sort(out)
	return out
}
