package reconciler_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
)

var _ = Describe("the index's growth", func() {
	It("is re-sharded by the run after the one that outgrew it, not by a dry run, and once", func() {
		e := newEnv(envOptions{seed: 300})
		// an index of one shard, as if it had been created that small: 300
		// records are over vault.ReshardAbove (256) a shard
		code, out, err := vaultServer.Do(http.MethodPut, "/v1/"+e.mount+"/data/blacksmith/index/meta",
			`{"data":{"layout_version":1,"shards":1,"hash":"sha256-be32"}}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), string(out))

		cold := e.run(reconciler.RunOptions{})
		Expect(cold.Errors).To(BeEmpty())
		Expect(cold.Created).To(Equal(300))
		Expect(cold.Index).To(BeNil(), "the run read an empty index")

		dry := e.run(reconciler.RunOptions{DryRun: true})
		Expect(dry.Index).To(BeNil(), "a dry run writes nothing")

		grown := e.run(reconciler.RunOptions{})
		Expect(grown.Errors).To(BeEmpty())
		Expect(grown.Index).NotTo(BeNil())
		Expect(grown.Index.FromShards).To(Equal(1))
		Expect(grown.Index.ToShards).To(Equal(4))
		Expect(grown.Index.Records).To(Equal(300))
		Expect(grown.Index.Error).To(BeEmpty())
		Expect(grown.Index.Writes).To(Equal(1+4+1+1), "the layout twice, 4 new shards, 1 marker")
		Expect(e.index()).To(HaveLen(300))
		Expect(e.logs).To(gbytes.Say(`index re-sharded.*from=1 to=4 records=300`))

		again := e.run(reconciler.RunOptions{})
		Expect(again.Index).To(BeNil(), "75 records a shard: nothing to do")
		Expect(again.Writes).To(BeZero())
	})
})
