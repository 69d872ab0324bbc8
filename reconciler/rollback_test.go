package reconciler_test

import (
	"context"
	"errors"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("history and rollback", func() {
	var (
		e    *env
		ctx  = context.Background()
		name string
		id   string
	)
	BeforeEach(func() {
		e = newEnv(envOptions{seed: 2})
		e.m = e.newManagerWith(func(o *reconciler.Options) { o.Directors[0].Deployer = e.bosh })
		name = e.names[0]
		id = instanceID(name)
		Expect(e.run(report.RunOptions{}).Created).To(Equal(2))
	})

	// changeOutOfBand redeploys name with one more property, as an operator
	// with the bosh CLI would, and returns the new manifest.
	changeOutOfBand := func() string {
		GinkgoHelper()
		changed := strings.TrimRight(e.manifest(name), "\n") + "\ntags:\n  tuned_by_hand: \"yes\"\n"
		Expect(changed).NotTo(Equal(e.manifest(name)))
		Expect(e.sim.PutDeployment(changed)).To(Succeed())
		return changed
	}

	kinds := func(events []vault.Event) []string {
		var out []string
		for _, ev := range events {
			out = append(out, ev.Kind)
		}
		return out
	}

	It("appends to the instance's history, and a Vault-only restore neither rewrites it nor survives the next run", func() {
		original := e.manifest(name)
		changed := changeOutOfBand()
		s := e.run(report.RunOptions{Force: true}) // the listing does not show a manifest change: no cache
		Expect(s.Drift).To(Equal(1))
		backups, err := e.store.Backups(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).NotTo(BeEmpty(), "the drift was backed up first")

		Expect(e.store.Restores.Restore(ctx, id, backups[0])).To(Succeed())
		text, _, err := e.store.Manifest(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(Equal(original), "Vault holds the backup's manifest again")

		next := e.run(report.RunOptions{Force: true})
		Expect(next.Drift).To(Equal(1), "a Vault-only restore is undone: BOSH still runs the changed manifest")
		text, _, _ = e.store.Manifest(ctx, id)
		Expect(text).To(Equal(changed))

		events, err := e.store.Events(ctx, id, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(kinds(events)).To(Equal([]string{"drift", "restored", "drift"}), "newest first, nothing lost")
		Expect(events[2].RunID).NotTo(BeEmpty())
		Expect(events[2].Details).To(HaveKeyWithValue("strategy", "name"))
		view, err := e.m.Views().Instance(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(kinds(view.History)).To(Equal([]string{"drift", "restored", "drift", "created"}),
			"the created entry comes from the metadata document")
	})

	It("rolls back with a redeploy: BOSH runs the backup's manifest, Vault follows, the next run has nothing to undo", func() {
		original := e.manifest(name)
		changeOutOfBand()
		Expect(e.run(report.RunOptions{Force: true}).Drift).To(Equal(1))
		backups, err := e.store.Backups(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		tasks := e.sim.Stats().Tasks

		res, err := e.m.Rollback(ctx, id, backups[0], true)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Redeployed).To(BeTrue())
		Expect(res.TaskID).NotTo(BeZero())
		Expect(res.SafetyBackup).NotTo(BeEmpty(), "the state before the rollback is kept")
		Expect(e.sim.Stats().Tasks).To(Equal(tasks + 1))
		Expect(e.manifest(name)).To(Equal(original), "BOSH runs the backup's manifest")

		next := e.run(report.RunOptions{Force: true})
		Expect(next.Errors).To(BeEmpty())
		Expect(next.Drift).To(BeZero(), "nothing to undo")
		text, _, err := e.store.Manifest(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(Equal(original))

		events, err := e.store.Events(ctx, id, 3)
		Expect(err).NotTo(HaveOccurred())
		Expect(kinds(events)).To(ContainElements("redeployed", "restored"))

		view, err := e.m.Views().Instance(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(view.Match).To(Equal(&reconciler.RecordedMatch{Strategy: "name", Confidence: 0.9}))
		Expect(view.Backups).To(ContainElement(res.SafetyBackup))
		Expect(kinds(view.History)).To(ContainElements("redeployed", "drift", "created"))
		Expect(view.Quarantine).To(BeNil())
	})

	It("previews a restore with the Director's diff: one that would move what runs is refused, naming it; the safety backup holds what ran", func() {
		original := e.manifest(name)
		Expect(original).To(ContainSubstring("name: services"))
		old, err := e.store.BackupAll(ctx, id) // the seeded manifest, on the services network
		Expect(err).NotTo(HaveOccurred())
		moved := strings.ReplaceAll(original, "name: services", "name: moved-by-hand")
		Expect(e.sim.PutDeployment(moved)).To(Succeed())
		tasks := e.sim.Stats().Tasks

		_, err = e.m.Rollback(ctx, id, old, true)
		var refused *operation.RefusedError
		Expect(errors.As(err, &refused)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("network at instance_groups/"))
		Expect(e.sim.Stats().Tasks).To(Equal(tasks), "nothing deployed")
		Expect(e.manifest(name)).To(Equal(moved))

		Expect(e.sim.PutDeployment(strings.Replace(original, "canaries: 1", "canaries: 2", 1))).To(Succeed()) // a change the guard lets through
		runs := e.manifest(name)
		res, err := e.m.Rollback(ctx, id, old, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Redeployed).To(BeTrue())
		safety, ok, err := e.store.Archive.BackupManifest(ctx, id, res.SafetyBackup)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(safety).To(Equal(runs), "the safety backup holds the manifest the Director ran, before the deploy")
		Expect(e.manifest(name)).To(Equal(original))
	})

	It("refuses to deploy a backup's manifest for another deployment, and changes nothing", func() {
		other := instanceID(e.names[1])
		backup, err := e.store.BackupAll(ctx, other)
		Expect(err).NotTo(HaveOccurred())
		// Graft the other instance's manifest into a backup of this one.
		Expect(e.store.PutManifest(ctx, id, e.manifest(e.names[1]))).To(Succeed())
		graft, err := e.store.BackupAll(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(e.store.PutManifest(ctx, id, e.manifest(name))).To(Succeed())
		tasks := e.sim.Stats().Tasks

		_, err = e.m.Rollback(ctx, id, graft, true)
		Expect(err).To(MatchError(reconciler.ErrRollback))
		Expect(err.Error()).To(ContainSubstring(e.names[1]))
		Expect(e.sim.Stats().Tasks).To(Equal(tasks), "no task")
		_, err = e.m.Rollback(ctx, other, backup, true)
		Expect(err).NotTo(HaveOccurred(), "its own backup is fine")
	})
})
