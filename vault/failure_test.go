package vault_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// seedIndex writes n records and returns their ids and one id per shard
// touched, through a store talking to Vault directly.
func seedIndex(srv *testvault.Server, mount string, n int) []string {
	GinkgoHelper()
	s := openStore(srv.Addr, srv.Token, mount)
	changes := map[string]vault.Change{}
	var ids []string
	for i := range n {
		id := fmt.Sprintf("seed-%d", i)
		ids = append(ids, id)
		changes[id] = put(rec("svc", "p"))
	}
	_, err := s.Update(ctx, changes)
	Expect(err).NotTo(HaveOccurred())
	return ids
}

// sameShard returns the first id prefix-N that falls into shard n.
func sameShard(prefix string, n int) string {
	for i := 0; ; i++ {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if vault.ShardOf(id, vault.DefaultShards) == n {
			return id
		}
	}
}

// touchAll changes every id (so every shard they live in would be written).
func touchAll(ids []string) map[string]vault.Change {
	changes := map[string]vault.Change{}
	for _, id := range ids {
		changes[id] = func(cur *vault.Record) (*vault.Record, error) {
			cur.ReconciledAt = "2030-01-01T00:00:00Z"
			return cur, nil
		}
	}
	return changes
}

var _ = Describe("Failures", func() {
	for _, version := range []int{1, 2} {
		Context(fmt.Sprintf("on KV v%d", version), func() {
			var (
				srv   *testvault.Server
				mount string
				ids   []string
				shard string // the shard of ids[0]
			)
			BeforeEach(func() {
				srv = server()
				mount = newMount(srv, version)
				ids = seedIndex(srv, mount, 300)
				shard = vault.ShardPath(vault.ShardOf(ids[0], vault.DefaultShards))
			})

			DescribeTable("an injected read failure leaves the stored index byte for byte unchanged",
				func(status int, body string, sentinel error) {
					px := newProxy(srv.Addr, mount)
					store := openStore(px.URL(), srv.Token, mount)
					before := indexState(srv, mount, version)
					px.setFault(failGET("/"+shard, status, body))

					res, err := store.Update(ctx, touchAll(ids))
					Expect(err).To(HaveOccurred())
					if sentinel != nil {
						Expect(errors.Is(err, sentinel)).To(BeTrue(), "%v", err)
					}
					Expect(err.Error()).To(ContainSubstring("nothing written"))
					Expect(err.Error()).To(ContainSubstring(mount + "/" + shard))
					Expect(res.Writes).To(BeZero())
					Expect(px.writes.Load()).To(BeZero())
					Expect(indexState(srv, mount, version)).To(Equal(before))

					idx, err := store.Index(ctx)
					Expect(err).To(HaveOccurred(), "Index must fail rather than return a partial map")
					Expect(idx).To(BeNil())
				},
				Entry("a server error", http.StatusInternalServerError, `{"errors":["injected"]}`, nil),
				Entry("a truncated body", http.StatusOK, `{"data":{"data":{"seed-1":{"serv`, vault.ErrCorrupt),
				Entry("a body without data", http.StatusOK, `{"warnings":["injected"]}`, vault.ErrCorrupt),
			)

			It("says exactly which records were written when one shard write fails", func() {
				px := newProxy(srv.Addr, mount)
				store := openStore(px.URL(), srv.Token, mount)
				px.setFault(failRequest(http.MethodPut, "/"+shard, http.StatusInternalServerError, `{"errors":["injected"]}`))

				res, err := store.Update(ctx, touchAll(ids))
				Expect(err).To(MatchError(ContainSubstring(mount + "/" + shard + " not written")))
				var lost, written []string
				for _, id := range ids {
					if vault.ShardPath(vault.ShardOf(id, vault.DefaultShards)) == shard {
						lost = append(lost, id)
					} else {
						written = append(written, id)
					}
				}
				slices.Sort(written)
				Expect(res.Changed).To(Equal(written))
				idx, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				for _, id := range written {
					Expect(idx.Records[id].ReconciledAt).To(Equal("2030-01-01T00:00:00Z"), id)
				}
				for _, id := range lost {
					Expect(idx.Records[id].ReconciledAt).To(BeEmpty(), id)
				}
			})

			It("fails the whole update when a policy denies reading one shard", func() {
				policy := fmt.Sprintf(`path "%[1]s/*" { capabilities = ["create","read","update","delete","list"] }
path "%[1]s/data/%[2]s" { capabilities = ["deny"] }
path "%[1]s/%[2]s" { capabilities = ["deny"] }`, mount, shard)
				body, _ := json.Marshal(map[string]string{"policy": policy})
				code, out, err := srv.Do(http.MethodPut, "/v1/sys/policies/acl/"+mount, string(body))
				Expect(err).NotTo(HaveOccurred())
				Expect(code/100).To(Equal(2), string(out))
				token := createToken(srv, fmt.Sprintf(`{"policies":["%s"],"ttl":"1h"}`, mount))

				store := openStore(srv.Addr, token, mount, func(o *vault.Options) { o.KVVersion = version })
				before := indexState(srv, mount, version)
				res, err := store.Update(ctx, touchAll(ids))
				Expect(errors.Is(err, vault.ErrDenied)).To(BeTrue(), "%v", err)
				Expect(res.Writes).To(BeZero())
				Expect(indexState(srv, mount, version)).To(Equal(before))
			})

			It("reports a corrupt record with its path, keeps it, and keeps working", func() {
				store := openStore(srv.Addr, srv.Token, mount)
				var entries map[string]json.RawMessage
				Expect(json.Unmarshal([]byte(rawGet(srv, mount, version, shard).Data), &entries)).To(Succeed())
				// Two ids that belong in the same shard as ids[0].
				target := vault.ShardOf(ids[0], vault.DefaultShards)
				badJSON, badType := sameShard("bad-json", target), sameShard("bad-type", target)
				entries[badJSON] = json.RawMessage(`"{\"service_id\": broken"`)
				entries[badType] = json.RawMessage(`{"orphaned":"yes","plan_id":"p","service_id":"s"}`)
				entries["misplaced"] = json.RawMessage(`{"plan_id":"p","service_id":"s"}`)
				Expect(vault.ShardOf("misplaced", vault.DefaultShards)).NotTo(Equal(target))
				all, _ := json.Marshal(entries)
				rawPut(srv, mount, version, shard, string(all))

				idx, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(idx.Records).To(HaveLen(301))
				Expect(idx.Records).NotTo(HaveKey(badJSON))
				Expect(idx.Records).NotTo(HaveKey("misplaced"))
				Expect(string(idx.Records[badType].Extra["orphaned"])).To(Equal(`"yes"`))
				Expect(idx.Problems).To(HaveLen(3))
				var msgs []string
				for _, p := range idx.Problems {
					msgs = append(msgs, p.Error())
				}
				Expect(slices.IsSorted(msgs)).To(BeTrue(), "problems are sorted: %q", msgs)
				for _, p := range idx.Problems {
					var re *vault.RecordError
					Expect(errors.As(p, &re)).To(BeTrue())
					Expect(errors.Is(p, vault.ErrCorrupt)).To(BeTrue())
					Expect(re.Path).To(Equal(mount + "/" + shard))
					Expect(re.ID).To(BeElementOf(badJSON, badType, "misplaced"))
				}

				By("updating its neighbours without touching it")
				res, err := store.Update(ctx, touchAll(append([]string{badJSON}, ids...)))
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring(badJSON))
				Expect(res.Changed).To(HaveLen(len(ids)))
				Expect(res.Changed).NotTo(ContainElement(badJSON))
				var after map[string]json.RawMessage
				Expect(json.Unmarshal([]byte(rawGet(srv, mount, version, shard).Data), &after)).To(Succeed())
				Expect(string(after[badJSON])).To(Equal(string(entries[badJSON])))
				Expect(string(after[badType])).To(Equal(string(entries[badType])))
				Expect(string(after["misplaced"])).To(Equal(string(entries["misplaced"])))

				By("reporting a change aimed only at it while other shards are written")
				var elsewhere string
				for _, id := range ids {
					if vault.ShardOf(id, vault.DefaultShards) != target {
						elsewhere = id
						break
					}
				}
				res, err = store.Update(ctx, touchAll([]string{badJSON, elsewhere}))
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
				Expect(res.Changed).To(BeEmpty(), "already touched above: no change, no write")
				Expect(res.Writes).To(BeZero())
				Expect(rawGet(srv, mount, version, shard).Data).To(ContainSubstring(badJSON))

				_, err = store.Record(ctx, badJSON)
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue())
				Expect(err.Error()).To(ContainSubstring(mount + "/" + shard))
			})

			It("writes nothing when the layout document is corrupt", func() {
				store := openStore(srv.Addr, srv.Token, mount)
				rawPut(srv, mount, version, "blacksmith/index/meta", `{"layout_version":"one","shards":128}`)
				before := indexState(srv, mount, version)
				_, err := store.Update(ctx, touchAll(ids))
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
				_, err = store.Index(ctx)
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
				Expect(indexState(srv, mount, version)).To(Equal(before))

				rawPut(srv, mount, version, "blacksmith/index/meta", `{"layout_version":9,"shards":128,"hash":"sha256-be32"}`)
				_, err = store.Index(ctx)
				Expect(errors.Is(err, vault.ErrUnsupportedLayout)).To(BeTrue(), "%v", err)
			})

			It("gives a clear error and writes nothing when Vault becomes unreachable", func() {
				px := newProxy(srv.Addr, mount)
				store := openStore(px.URL(), srv.Token, mount, shortFailover)
				before := indexState(srv, mount, version)
				px.srv.CloseClientConnections()
				px.srv.Close()

				_, err := store.Update(ctx, touchAll(ids))
				Expect(errors.Is(err, vault.ErrUnreachable)).To(BeTrue(), "%v", err)
				md := &vault.Metadata{Releases: []vault.Resource{{Name: "redis", Version: "1"}}} // KV v1 refuses an empty one
				Expect(store.Documents.PutMetadata(ctx, ids[0], md)).To(MatchError(vault.ErrUnreachable))
				Expect(indexState(srv, mount, version)).To(Equal(before))
			})
		})
	}

	It("refuses to start against an unreachable address", func() {
		l, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			Skip("127.0.0.2 is not usable here: " + err.Error())
		}
		addr := l.Addr().String()
		Expect(l.Close()).To(Succeed())
		_, err = vault.New(ctx, vault.Options{Address: "http://" + addr, Token: "t"})
		Expect(errors.Is(err, vault.ErrUnreachable)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(addr))
	})

	Context("with a sealed Vault", func() {
		It("gives a clear error and writes nothing", func() {
			srv := testvault.ForSuite(testvault.Options{})
			store := openStore(srv.Addr, srv.Token, "secret", shortFailover)
			ids := seedIndex(srv, "secret", 50)
			before := indexState(srv, "secret", 2)

			Expect(srv.Seal()).To(Succeed())
			_, err := store.Update(ctx, touchAll(ids))
			Expect(errors.Is(err, vault.ErrSealed)).To(BeTrue(), "%v", err)
			_, err = store.Index(ctx)
			Expect(errors.Is(err, vault.ErrSealed)).To(BeTrue(), "%v", err)
			Expect(store.PutManifest(ctx, ids[0], "x")).To(MatchError(vault.ErrSealed))
			_, err = vault.New(context.Background(), vault.Options{Address: srv.Addr, Token: srv.Token})
			Expect(errors.Is(err, vault.ErrSealed)).To(BeTrue(), "%v", err)

			unseal(srv)
			Expect(indexState(srv, "secret", 2)).To(Equal(before))
		})
	})
})

// unseal unseals a dev server with the key it printed at start.
func unseal(srv *testvault.Server) {
	GinkgoHelper()
	re := regexp.MustCompile(`Unseal Key: (\S+)`)
	// The dev server prints its banner around the time it starts answering.
	Eventually(srv.Log).WithTimeout(10 * time.Second).Should(MatchRegexp(re.String()))
	m := re.FindStringSubmatch(srv.Log())
	code, out, err := srv.Do(http.MethodPut, "/v1/sys/unseal", fmt.Sprintf(`{"key":%q}`, m[1]))
	Expect(err).NotTo(HaveOccurred())
	Expect(code).To(Equal(http.StatusOK), string(out))
}

// createToken creates a token with the given request body and returns it.
func createToken(srv *testvault.Server, body string) string {
	GinkgoHelper()
	code, out, err := srv.Do(http.MethodPost, "/v1/auth/token/create", body)
	Expect(err).NotTo(HaveOccurred())
	Expect(code).To(Equal(http.StatusOK), string(out))
	var resp struct {
		Auth struct {
			ClientToken string `json:"client_token"`
		} `json:"auth"`
	}
	Expect(json.Unmarshal(out, &resp)).To(Succeed())
	return resp.Auth.ClientToken
}
