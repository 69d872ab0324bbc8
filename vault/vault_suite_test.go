package vault_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

func TestVault(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "vault")
}

// One real Vault dev server serves most specs; each spec mounts fresh KV
// engines so specs never see each other's data.
var (
	sharedOnce sync.Once
	shared     *testvault.Server
	sharedErr  error
	mounts     atomic.Int64
)

var _ = AfterSuite(func() {
	if shared != nil {
		shared.Stop()
	}
})

// server returns the shared Vault, starting it on first use; without a Vault
// binary the spec is skipped (failed under CI=true).
func server() *testvault.Server {
	GinkgoHelper()
	sharedOnce.Do(func() { shared, sharedErr = testvault.Start(testvault.Options{}) })
	if errors.Is(sharedErr, testvault.ErrNoBinary) && !testvault.InCI() {
		Skip("no Vault binary: " + sharedErr.Error())
	}
	Expect(sharedErr).NotTo(HaveOccurred())
	return shared
}

// newMount mounts a fresh KV engine of the given version on srv.
func newMount(srv *testvault.Server, version int) string {
	GinkgoHelper()
	m := fmt.Sprintf("kv%d-%d", version, mounts.Add(1))
	Expect(srv.EnableKV(m, version)).To(Succeed())
	return m
}

// newStore mounts a fresh KV engine and opens a Store on it (KV version
// detected), closed when the spec ends.
func newStore(srv *testvault.Server, version int, mod ...func(*vault.Options)) (*vault.Store, string) {
	GinkgoHelper()
	m := newMount(srv, version)
	return openStore(srv.Addr, srv.Token, m, mod...), m
}

func openStore(addr, token, mount string, mod ...func(*vault.Options)) *vault.Store {
	GinkgoHelper()
	opts := vault.Options{Address: addr, Token: token, Mount: mount}
	for _, f := range mod {
		f(&opts)
	}
	s, err := vault.New(context.Background(), opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Close)
	return s
}

// stored is a document as Vault holds it: its data bytes and KV v2 version.
type stored struct {
	Code    int
	Data    string
	Version int
}

// rawGet reads a document straight from Vault's HTTP API, bypassing the
// package under test.
func rawGet(srv *testvault.Server, mount string, version int, path string) stored {
	GinkgoHelper()
	p := "/v1/" + mount + "/" + path
	if version == 2 {
		p = "/v1/" + mount + "/data/" + path
	}
	code, body, err := srv.Do(http.MethodGet, p, "")
	Expect(err).NotTo(HaveOccurred())
	if code != http.StatusOK {
		return stored{Code: code}
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	Expect(json.Unmarshal(body, &env)).To(Succeed())
	if version == 1 {
		return stored{Code: code, Data: string(env.Data)}
	}
	var v2 struct {
		Data     json.RawMessage `json:"data"`
		Metadata struct {
			Version int `json:"version"`
		} `json:"metadata"`
	}
	Expect(json.Unmarshal(env.Data, &v2)).To(Succeed())
	return stored{Code: code, Data: string(v2.Data), Version: v2.Metadata.Version}
}

// rawPut writes a document straight through Vault's HTTP API.
func rawPut(srv *testvault.Server, mount string, version int, path, data string) {
	GinkgoHelper()
	p, body := "/v1/"+mount+"/"+path, data
	if version == 2 {
		p, body = "/v1/"+mount+"/data/"+path, `{"data":`+data+`}`
	}
	code, out, err := srv.Do(http.MethodPut, p, body)
	Expect(err).NotTo(HaveOccurred())
	Expect(code/100).To(Equal(2), string(out))
}

// indexState is every index document (meta, shards, legacy db) as stored.
func indexState(srv *testvault.Server, mount string, version int) map[string]stored {
	GinkgoHelper()
	out := map[string]stored{
		"meta": rawGet(srv, mount, version, "blacksmith/index/meta"),
		"db":   rawGet(srv, mount, version, "db"),
	}
	for i := 0; i < vault.DefaultShards; i++ {
		out[vault.ShardPath(i)] = rawGet(srv, mount, version, vault.ShardPath(i))
	}
	return out
}

// rec is a small record for specs.
func rec(service, plan string) *vault.Record {
	return &vault.Record{ServiceID: service, PlanID: plan, DeploymentName: plan + "-x"}
}

// put returns a Change that sets the record to r.
func put(r *vault.Record) vault.Change {
	return func(*vault.Record) (*vault.Record, error) { return r.Clone(), nil }
}

// idsInShards returns n distinct ids that all fall into shards [0, k).
func idsInShards(prefix string, n, k int) []string {
	var ids []string
	for i := 0; len(ids) < n; i++ {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if vault.ShardOf(id, vault.DefaultShards) < k {
			ids = append(ids, id)
		}
	}
	return ids
}

var ctx = context.Background()
