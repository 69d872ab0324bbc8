package reconciler_test

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// deleteDocument deletes every version of a document under the env's mount.
func (e *env) deleteDocument(path string) {
	GinkgoHelper()
	code, body, err := vaultServer.Do(http.MethodDelete, "/v1/"+e.mount+"/metadata/"+path, "")
	Expect(err).NotTo(HaveOccurred())
	Expect(code).To(Equal(http.StatusNoContent), string(body))
}

var _ = Describe("documents lost from Vault while the index holds the instance", func() {
	It("are written again by a forced run, which trusts no fingerprint", func() {
		e := newEnv(envOptions{seed: 2})
		e.run(report.RunOptions{})
		ctx := context.Background()
		lostManifest, lostMetadata := instanceID(e.names[0]), instanceID(e.names[1])
		e.deleteDocument(lostManifest + "/manifest")
		e.deleteDocument(lostMetadata + "/metadata")

		Expect(e.run(report.RunOptions{}).Writes).To(BeZero(), "a run that is not forced trusts the index's fingerprints")

		s := e.run(report.RunOptions{Force: true})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.InstancesSynced).To(Equal(2))
		Expect(s.Writes).To(Equal(2), "one document each, nothing else")
		text, ok, err := e.store.Manifest(ctx, lostManifest)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(text).To(Equal(e.manifest(e.names[0])))
		md, err := e.store.Documents.Metadata(ctx, lostMetadata)
		Expect(err).NotTo(HaveOccurred())
		Expect(md).NotTo(BeNil())
		Expect(md.VMs).NotTo(BeEmpty())

		Expect(e.run(report.RunOptions{Force: true}).Writes).To(BeZero(), "in step again")
	})
})
