package operator_test

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("GET /b/instances/{id}: bindings and backups", func() {
	// credential is what the binding's credentials and parameters hold.
	const credential = "s3cret-bound-to-app-1"

	It("lists the bindings with their state and what each backup holds, never a credential", func() {
		e := newEnv()
		Eventually(func() int { return e.request("POST", "/b/reconcile", "").Status }).Should(Equal(http.StatusAccepted))
		e.provisioned("r-3", "redis-small")
		ctx := context.Background()
		Expect(e.store.PutSecret(ctx, "r-3/binding-ids", map[string]any{"ids": []any{"bind-1", "bind-2"}})).To(Succeed())
		Expect(e.store.PutSecret(ctx, "r-3/bindings/bind-1", map[string]any{"credentials": map[string]any{"password": credential},
			"app_guid": "app-1", "parameters": map[string]any{"token": credential}})).To(Succeed())
		_, err := e.store.BackupAll(ctx, "r-3")
		Expect(err).NotTo(HaveOccurred())

		a := e.request("GET", "/b/instances/r-3", "")
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(a.Raw).NotTo(ContainSubstring(credential))
		Expect(a.Body).To(HaveKeyWithValue("bindings_total", BeNumerically("==", 2)))
		Expect(a.Body["bindings"]).To(Equal([]any{
			map[string]any{"binding_id": "bind-1", "state": "bound", "app_guid": "app-1"},
			map[string]any{"binding_id": "bind-2", "state": "missing"},
		}))
		contents := a.Body["backup_contents"].([]any)
		Expect(contents).NotTo(BeEmpty())
		newest := contents[0].(map[string]any)
		Expect(newest["id"]).To(Equal(a.Body["backups"].([]any)[0]))
		Expect(newest).To(And(HaveKeyWithValue("holds", ContainElement("record")), HaveKeyWithValue("bindings", BeNumerically("==", 1)),
			HaveKey("taken_at")))
	})
})
