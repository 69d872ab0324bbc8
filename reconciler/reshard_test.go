package reconciler_test

import (
	"encoding/json"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// layoutShards is the shard count the index's layout document says.
func (e *env) layoutShards() int {
	GinkgoHelper()
	code, out, err := vaultServer.Do(http.MethodGet, "/v1/"+e.mount+"/data/blacksmith/index/meta", "")
	Expect(err).NotTo(HaveOccurred())
	Expect(code).To(Equal(http.StatusOK), string(out))
	var doc struct {
		Data struct {
			Data struct {
				Shards int `json:"shards"`
			} `json:"data"`
		} `json:"data"`
	}
	Expect(json.Unmarshal(out, &doc)).To(Succeed())
	return doc.Data.Data.Shards
}

var _ = Describe("the index's growth", func() {
	It("is re-sharded before the run writes the records that would outgrow it, not by a dry run, and once", func() {
		e := newEnv(envOptions{seed: 300})
		// an index of one shard, as if it had been created that small: 300
		// records are over vault.ReshardAbove (256) a shard
		code, out, err := vaultServer.Do(http.MethodPut, "/v1/"+e.mount+"/data/blacksmith/index/meta",
			`{"data":{"layout_version":1,"shards":1,"hash":"sha256-be32"}}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), string(out))

		dry := e.run(report.RunOptions{DryRun: true})
		Expect(dry.Index).To(BeNil(), "a dry run writes nothing")

		cold := e.run(report.RunOptions{})
		Expect(cold.Errors).To(BeEmpty())
		Expect(cold.Created).To(Equal(300))
		Expect(cold.Index).NotTo(BeNil())
		Expect(cold.Index.FromShards).To(Equal(1))
		Expect(cold.Index.ToShards).To(Equal(8), "64 or fewer a shard")
		Expect(cold.Index.Records).To(BeZero(), "the index was empty")
		Expect(cold.Index.Expected).To(Equal(300))
		Expect(cold.Index.Error).To(BeEmpty())
		Expect(cold.Index.Writes).To(Equal(1+1+1), "the layout twice and 1 marker: the shard was empty")
		Expect(e.logs).To(gbytes.Say(`index re-sharded.*from=1 to=8 records=0 expected=300`))
		Expect(e.index()).To(HaveLen(300))
		Expect(e.layoutShards()).To(Equal(8))

		again := e.run(report.RunOptions{})
		Expect(again.Index).To(BeNil(), "38 records a shard: nothing to do")
		Expect(again.Writes).To(BeZero())
	})

	It("leaves a new index at the default count when the records fit it", func() {
		e := newEnv(envOptions{seed: 3})
		cold := e.run(report.RunOptions{})
		Expect(cold.Errors).To(BeEmpty())
		Expect(cold.Index).To(BeNil(), "3 records fit the default 128 shards")
		Expect(e.layoutShards()).To(Equal(vault.DefaultShards))
	})
})
