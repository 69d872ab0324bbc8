package reconciler_test

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("the instance view's bindings and backups", func() {
	// credential is what a binding's credentials hold: shown nowhere.
	const credential = "s3cret-of-the-binding"

	It("lists the bindings with their state and what each backup holds, never a credential", func() {
		e := newEnv(envOptions{seed: 1})
		e.run(report.RunOptions{})
		id := instanceID(e.names[0])
		put := func(path string, data map[string]any) {
			GinkgoHelper()
			Expect(e.store.PutSecret(ctx(), path, data)).To(Succeed())
		}
		put(id+"/binding-ids", map[string]any{"ids": []any{"b-bound", "b-binding", "b-gone", "b-unbind-failed"}})
		put(id+"/bindings/b-bound", map[string]any{"credentials": map[string]any{"password": credential}, "app_guid": "app-1",
			"parameters": map[string]any{"token": credential}})
		put(id+"/bindings/b-binding", map[string]any{"credentials": map[string]any{"password": credential}, "secrets": map[string]any{"password": credential},
			"operation": map[string]any{"type": "bind", "state": "in progress", "description": "deploying the binding's user", "task_id": 41, "started_at": "2026-11-28T10:00:00Z"}})
		put(id+"/bindings/b-unbind-failed", map[string]any{"credentials": map[string]any{"password": credential},
			"operation": map[string]any{"type": "unbind", "state": "failed", "description": "task 42 failed"}})
		backup, err := e.store.BackupAll(ctx(), id)
		Expect(err).NotTo(HaveOccurred())

		v, err := e.m.Views().Instance(ctx(), id)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.BindingsTotal).To(Equal(4))
		Expect(v.Bindings).To(HaveLen(4))
		states := map[string]string{}
		for _, b := range v.Bindings {
			states[b.BindingID] = b.State
		}
		Expect(states).To(Equal(map[string]string{"b-bound": "bound", "b-binding": "binding", "b-gone": "missing", "b-unbind-failed": "unbind failed"}))
		Expect(v.Bindings[0].AppGUID).To(Equal("app-1"))
		Expect(v.Bindings[1].Operation).To(And(Not(BeNil()), HaveField("TaskID", 41), HaveField("Description", "deploying the binding's user")))

		Expect(v.BackupContents).NotTo(BeEmpty())
		Expect(v.BackupContents[0].ID).To(Equal(backup))
		Expect(v.BackupContents[0].Holds).To(ContainElements("record", "manifest"))
		Expect(v.BackupContents[0].Bindings).To(Equal(3), "the credentials of the three bindings Vault holds")
		Expect(v.BackupContents[0].Secrets).To(BeNumerically(">=", 3))

		text, err := json.Marshal(v)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(text)).NotTo(ContainSubstring(credential))
	})
})
