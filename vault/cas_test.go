package vault_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// addKey returns a change that adds key to the metadata's other fields.
func addKey(key string) func(*vault.Metadata) (*vault.Metadata, error) {
	return func(cur *vault.Metadata) (*vault.Metadata, error) {
		if cur == nil {
			cur = &vault.Metadata{}
		}
		if cur.Extra == nil {
			cur.Extra = map[string]json.RawMessage{}
		}
		cur.Extra[key] = json.RawMessage(`true`)
		return cur, nil
	}
}

// casPut adds key to the document at path as another daemon would: read,
// then a check-and-set write on the version read, again until it lands.
func casPut(srv *testvault.Server, mount, path, key string) {
	GinkgoHelper()
	for {
		cur := rawGet(srv, mount, 2, path)
		data := map[string]json.RawMessage{}
		if cur.Code == http.StatusOK {
			Expect(json.Unmarshal([]byte(cur.Data), &data)).To(Succeed())
		}
		data[key] = json.RawMessage(`true`)
		body, _ := json.Marshal(map[string]any{"data": data, "options": map[string]int{"cas": cur.Version}})
		code, out, err := srv.Do(http.MethodPut, "/v1/"+mount+"/data/"+path, string(body))
		Expect(err).NotTo(HaveOccurred())
		if code/100 == 2 {
			return
		}
		Expect(code).To(Equal(http.StatusBadRequest), string(out))
	}
}

var _ = Describe("check-and-set on an instance's documents (KV v2)", func() {
	const n = 25

	It("lose no key when two daemons change one metadata document at once (UpdateMetadata)", func() {
		srv := server()
		a, mount := newStore(srv, 2)
		b := openStore(srv.Addr, srv.Token, mount)
		var wg sync.WaitGroup
		for who, s := range map[string]*vault.Store{"a": a, "b": b} {
			wg.Go(func() {
				defer GinkgoRecover()
				for i := range n {
					Expect(s.Documents.UpdateMetadata(ctx, "cas-md", addKey(fmt.Sprintf("%s-%d", who, i)))).To(Succeed())
				}
			})
		}
		wg.Wait()
		md, err := a.Documents.Metadata(ctx, "cas-md")
		Expect(err).NotTo(HaveOccurred())
		Expect(md.Extra).To(HaveLen(2*n), "every key of both writers")
		Expect(rawGet(srv, mount, 2, "cas-md/metadata").Version).To(BeNumerically(">=", 2*n))
	})

	It("refuse (ErrConflict) a PutMetadata of metadata read before another daemon changed it, and write metadata that was not read", func() {
		srv := server()
		a, mount := newStore(srv, 2)
		b := openStore(srv.Addr, srv.Token, mount)
		Expect(a.Documents.PutMetadata(ctx, "cas-put", &vault.Metadata{Releases: []vault.Resource{{Name: "redis", Version: "1"}}})).To(Succeed())
		read, err := a.Documents.Metadata(ctx, "cas-put")
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Documents.UpdateMetadata(ctx, "cas-put", addKey("from-b"))).To(Succeed())

		stale := *read
		stale.Releases = []vault.Resource{{Name: "redis", Version: "2"}}
		Expect(a.Documents.PutMetadata(ctx, "cas-put", &stale)).To(MatchError(vault.ErrConflict))
		md, err := a.Documents.Metadata(ctx, "cas-put")
		Expect(err).NotTo(HaveOccurred())
		Expect(md.Extra).To(HaveKey("from-b"), "the other daemon's key is kept")
		Expect(md.Releases[0].Version).To(Equal("1"))

		md.Releases = []vault.Resource{{Name: "redis", Version: "2"}} // read again, changed again: lands
		Expect(a.Documents.PutMetadata(ctx, "cas-put", md)).To(Succeed())
		Expect(a.Documents.PutMetadata(ctx, "cas-put", &vault.Metadata{})).To(Succeed(), "metadata that was not read is written as given")
	})

	It("keep the keys another daemon adds to the manifest document meanwhile (PutManifest)", func() {
		srv := server()
		store, mount := newStore(srv, 2)
		var wg sync.WaitGroup
		wg.Go(func() {
			defer GinkgoRecover()
			for i := range n {
				Expect(store.PutManifest(ctx, "cas-mf", fmt.Sprintf("name: m-%d\n", i))).To(Succeed())
			}
		})
		wg.Go(func() {
			defer GinkgoRecover()
			for i := range n {
				casPut(srv, mount, "cas-mf/manifest", fmt.Sprintf("other-%d", i))
			}
		})
		wg.Wait()
		var data map[string]json.RawMessage
		Expect(json.Unmarshal([]byte(rawGet(srv, mount, 2, "cas-mf/manifest").Data), &data)).To(Succeed())
		Expect(data).To(HaveLen(n+1), "the manifest and every other key")
		Expect(string(data["manifest"])).To(Equal(fmt.Sprintf("%q", fmt.Sprintf("name: m-%d\n", n-1))))
	})

	It("give up with ErrConflict, unwritten, when the version keeps moving", func() {
		srv := server()
		store, mount := newStore(srv, 2)
		err := store.Documents.UpdateMetadata(ctx, "cas-busy", func(cur *vault.Metadata) (*vault.Metadata, error) {
			rawPut(srv, mount, 2, "cas-busy/metadata", `{"other":true}`) // another writer, every time
			return addKey("mine")(cur)
		})
		Expect(err).To(MatchError(vault.ErrConflict))
		Expect(rawGet(srv, mount, 2, "cas-busy/metadata").Data).To(Equal(`{"other":true}`))
	})

	It("write nothing when the change returns nil, and refuse a document that does not decode", func() {
		srv := server()
		store, mount := newStore(srv, 2)
		Expect(store.Documents.UpdateMetadata(ctx, "cas-nil", func(*vault.Metadata) (*vault.Metadata, error) { return nil, nil })).To(Succeed())
		Expect(rawGet(srv, mount, 2, "cas-nil/metadata").Code).To(Equal(http.StatusNotFound))
		rawPut(srv, mount, 2, "cas-bad/metadata", `{"history":"not a list"}`)
		Expect(store.Documents.UpdateMetadata(ctx, "cas-bad", addKey("k"))).To(MatchError(vault.ErrCorrupt))
		Expect(rawGet(srv, mount, 2, "cas-bad/metadata").Version).To(Equal(1))
	})
})

var _ = Describe("the same read-modify-writes on KV v1 (no check-and-set)", func() {
	It("keep the document's other keys", func() {
		store, mount := newStore(server(), 1)
		Expect(store.Documents.UpdateMetadata(ctx, "v1", addKey("a"))).To(Succeed())
		Expect(store.Documents.UpdateMetadata(ctx, "v1", addKey("b"))).To(Succeed())
		md, err := store.Documents.Metadata(ctx, "v1")
		Expect(err).NotTo(HaveOccurred())
		Expect(md.Extra).To(HaveKey("a"))
		Expect(md.Extra).To(HaveKey("b"))
		rawPut(server(), mount, 1, "v1/manifest", `{"other":1}`)
		Expect(store.PutManifest(ctx, "v1", "name: x\n")).To(Succeed())
		Expect(rawGet(server(), mount, 1, "v1/manifest").Data).To(MatchJSON(`{"other":1,"manifest":"name: x\n"}`))
	})
})

var _ = Describe("check-and-set on secrets (KV v2)", func() {
	It("keeps every entry two daemons add to one list at once, and creates a secret once", func() {
		srv := server()
		a, mount := newStore(srv, 2)
		b := openStore(srv.Addr, srv.Token, mount)
		var wg sync.WaitGroup
		for who, s := range map[string]*vault.Store{"a": a, "b": b} {
			wg.Go(func() {
				defer GinkgoRecover()
				for i := range 20 {
					Expect(s.UpdateSecret(ctx, "i1/binding-ids", func(cur map[string]any, _ bool) (map[string]any, error) {
						ids, _ := cur["ids"].([]any)
						return map[string]any{"ids": append(ids, fmt.Sprintf("%s-%d", who, i))}, nil
					})).To(Succeed())
				}
			})
		}
		wg.Wait()
		got, ok, err := a.Secret(ctx, "i1/binding-ids")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(got["ids"]).To(HaveLen(40), "no id lost")

		Expect(a.CreateSecret(ctx, "i1/credentials", map[string]any{"password": "first"})).To(Succeed())
		Expect(b.CreateSecret(ctx, "i1/credentials", map[string]any{"password": "second"})).To(MatchError(vault.ErrConflict))
		got, _, err = a.Secret(ctx, "i1/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveKeyWithValue("password", "first"))
	})
})
