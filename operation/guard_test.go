package operation_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/operation"
)

// running is an adopted instance's manifest: its password a variable of
// the configuration server, its own network and zones, an errand.
const running = `name: redis-small-inst
releases:
- {name: redis, version: "1.0.0"}
stemcells:
- {alias: default, os: ubuntu-jammy, version: "1.0"}
instance_groups:
- name: redis
  instances: 3
  azs: [z1, z2, z3]
  vm_type: default
  stemcell: default
  persistent_disk: 2048
  networks: [{name: services}]
  jobs:
  - name: redis
    release: redis
    properties:
      password: ((redis_password))
      admin_token: t0ken-1
      maxmemory: 64mb
  - name: exporter
    release: redis
- name: smoke-tests
  lifecycle: errand
  instances: 1
  azs: [z1]
  vm_type: default
  stemcell: default
  networks: [{name: services}]
  jobs:
  - {name: smoke-tests, release: redis}
variables:
- {name: redis_password, type: password}
update: {canaries: 1, max_in_flight: 1, canary_watch_time: 1000, update_watch_time: 1000}
`

// change applies edits (old, new) to running.
func change(edits ...string) string {
	out := running
	for i := 0; i+1 < len(edits); i += 2 {
		Expect(out).To(ContainSubstring(edits[i]))
		out = strings.Replace(out, edits[i], edits[i+1], 1)
	}
	return out
}

func newDirector() (*sim.Director, *bosh.Client) {
	GinkgoHelper()
	d, err := sim.New(sim.Options{TaskDuration: 50 * time.Millisecond})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(d.Close)
	c, err := bosh.New(bosh.Options{Address: d.URL(), Username: sim.DefaultUsername, Password: sim.DefaultPassword,
		Timeout: 5 * time.Second, Logger: slog.New(slog.NewTextHandler(GinkgoWriter, nil))})
	Expect(err).NotTo(HaveOccurred())
	return d, c
}

// classes is the classes of changes, guarded first.
func classes(cs []operation.Change) []operation.Class {
	var out []operation.Class
	for _, c := range cs {
		out = append(out, c.Class)
	}
	return out
}

func guarded(cs []operation.Change) []operation.Change {
	var out []operation.Change
	for _, c := range cs {
		if c.Class.IsGuarded() {
			out = append(out, c)
		}
	}
	return out
}

var _ = Describe("the change guard, from the Director's own diff", func() {
	var (
		director *sim.Director
		client   *bosh.Client
		ctx      context.Context
	)
	BeforeEach(func() {
		director, client = newDirector()
		ctx = context.Background()
		Expect(director.PutDeployment(running)).To(Succeed())
	})

	// diffed is the Director's diff of deploying manifest, classified, and
	// the same two manifests compared here: both must find the same.
	diffed := func(manifest string) []operation.Change {
		GinkgoHelper()
		d, err := client.Diff(ctx, "redis-small-inst", []byte(manifest))
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Context).NotTo(BeEmpty())
		fromDirector := operation.Classify(d.Lines)
		local, err := operation.Compare(running, manifest)
		Expect(err).NotTo(HaveOccurred())
		Expect(classes(guarded(local))).To(Equal(classes(guarded(fromDirector))), "Compare and Classify disagree")
		return fromDirector
	}

	DescribeTable("names each class of guarded change, and refuses it",
		func(class operation.Class, path string, edits ...string) {
			changes := diffed(change(edits...))
			Expect(guarded(changes)).To(ContainElement(And(
				HaveField("Class", class), HaveField("Path", path))), "%v", changes)
			_, err := operation.Guard{Operation: "update"}.Check(changes)
			var refused *operation.RefusedError
			Expect(errors.As(err, &refused)).To(BeTrue())
			Expect(refused.Classes()).To(ContainElement(class))
			Expect(err.Error()).To(ContainSubstring(path))
		},
		Entry("a variable replaced by a literal", operation.Variable, "instance_groups/redis/jobs/redis/properties/password",
			"((redis_password))", "hunter2"),
		Entry("a secret's value changed", operation.Secret, "instance_groups/redis/jobs/redis/properties/admin_token",
			"admin_token: t0ken-1", "admin_token: t0ken-2"),
		Entry("an errand removed", operation.Errand, "instance_groups/smoke-tests",
			"- name: smoke-tests\n  lifecycle: errand\n  instances: 1\n  azs: [z1]\n  vm_type: default\n  stemcell: default\n  networks: [{name: services}]\n  jobs:\n  - {name: smoke-tests, release: redis}\n", ""),
		Entry("an instance group removed", operation.InstanceGroup, "instance_groups/redis",
			"- name: redis\n  instances: 3\n", "- name: cache\n  instances: 3\n"),
		Entry("a job removed", operation.Job, "instance_groups/redis/jobs/exporter",
			"  - name: exporter\n    release: redis\n", ""),
		Entry("a network changed", operation.Network, "instance_groups/redis/networks",
			"networks: [{name: services}]\n  jobs", "networks: [{name: default}]\n  jobs"),
		Entry("the zones changed", operation.AZ, "instance_groups/redis/azs", "azs: [z1, z2, z3]", "azs: [z1]"),
		Entry("a persistent disk shrunk", operation.Disk, "instance_groups/redis/persistent_disk",
			"persistent_disk: 2048", "persistent_disk: 1024"),
		Entry("a persistent disk removed", operation.Disk, "instance_groups/redis/persistent_disk",
			"  persistent_disk: 2048\n", ""),
		Entry("fewer instances", operation.Instances, "instance_groups/redis/instances",
			"instances: 3", "instances: 1"),
	)

	It("lets through what upgrades are for: releases, stemcells, properties, a larger disk, more instances", func() {
		changes := diffed(change(`version: "1.0.0"`, `version: "1.1.0"`, `version: "1.0"}`, `version: "1.1"}`,
			"maxmemory: 64mb", "maxmemory: 128mb", "persistent_disk: 2048", "persistent_disk: 4096",
			"instances: 3", "instances: 5"))
		Expect(guarded(changes)).To(BeEmpty(), "%v", changes)
		Expect(classes(changes)).To(ContainElements(operation.Release, operation.Stemcell, operation.Property))
		_, err := operation.Guard{Operation: "upgrade"}.Check(changes)
		Expect(err).NotTo(HaveOccurred())
		sum := operation.Summary(changes)
		Expect(sum["diff_releases"]).To(Equal("redis"))
		Expect(sum["diff_properties"]).To(Equal("maxmemory"))
		Expect(sum["diff_groups"]).To(ContainSubstring("redis"))
	})

	It("finds nothing to guard in a deployment that does not exist yet", func() {
		p, err := operation.Prepare(ctx, client, operation.Deploy{Operation: "provision", Instance: "new",
			Deployment: "redis-small-new", Manifest: strings.Replace(running, "redis-small-inst", "redis-small-new", 1)})
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Exists).To(BeFalse())
		Expect(p.Changes).To(BeEmpty())
		Expect(p.Changed()).To(BeTrue(), "a new deployment is a change")
	})

	It("sees a change that only adds top-level lines to a deployment that runs", func() {
		changes := diffed(running + "tags:\n  templates: one-one\n")
		Expect(changes).To(ContainElement(And(HaveField("Class", operation.Other), HaveField("Path", "tags/templates"))))
	})

	It("lets a change through that the operation means, or an operator allowed for the instance", func() {
		fewer := change("instances: 3", "instances: 1", "azs: [z1, z2, z3]", "azs: [z1]")
		changes := diffed(fewer)
		meant, err := operation.Compare(running, change("instances: 3", "instances: 1"))
		Expect(err).NotTo(HaveOccurred())
		_, err = operation.Guard{Operation: "update", Expected: meant}.Check(changes)
		var refused *operation.RefusedError
		Expect(errors.As(err, &refused)).To(BeTrue())
		Expect(refused.Classes()).To(Equal([]operation.Class{operation.AZ}), "the fewer instances were meant")
		allowed, err := operation.Guard{Operation: "update", Expected: meant, Allow: []operation.Class{operation.AZ}}.Check(changes)
		Expect(err).NotTo(HaveOccurred())
		Expect(classes(allowed)).To(Equal([]operation.Class{operation.AZ}))
	})

	It("reads an operator's allowance, refusing a class it does not know", func() {
		c, err := operation.ParseClass("network")
		Expect(err).NotTo(HaveOccurred())
		Expect(c).To(Equal(operation.Network))
		_, err = operation.ParseClass("everything")
		Expect(err).To(MatchError(ContainSubstring(`"everything" is not a class of guarded change`)))
	})
})

var _ = Describe("KeepVariables", func() {
	It("keeps the configuration server's variable a rendering would replace, and its definition", func() {
		rendered := strings.Replace(strings.Replace(running, "((redis_password))", "literal-from-the-broker", 1),
			"variables:\n- {name: redis_password, type: password}\n", "", 1)
		kept, places, err := operation.KeepVariables(running, rendered)
		Expect(err).NotTo(HaveOccurred())
		Expect(places).To(Equal([]string{"instance_groups/redis/jobs/redis/properties/password"}))
		Expect(kept).To(ContainSubstring("password: ((redis_password))"))
		Expect(kept).NotTo(ContainSubstring("literal-from-the-broker"))
		Expect(kept).To(ContainSubstring("name: redis_password"))
		changes, err := operation.Compare(running, kept)
		Expect(err).NotTo(HaveOccurred())
		Expect(changes).To(BeEmpty())
	})

	It("answers the rendering itself when it replaces no variable", func() {
		rendered := change("maxmemory: 64mb", "maxmemory: 1gb")
		kept, places, err := operation.KeepVariables(running, rendered)
		Expect(err).NotTo(HaveOccurred())
		Expect(places).To(BeEmpty())
		Expect(kept).To(Equal(rendered))
	})

	It("names what is not a manifest", func() {
		_, _, err := operation.KeepVariables("- a list", running)
		Expect(err).To(MatchError(ContainSubstring("the running manifest is not a YAML mapping")))
		_, _, err = operation.KeepVariables(running, "{")
		Expect(err).To(MatchError(ContainSubstring("the rendered manifest is not YAML")))
	})
})

var _ = Describe("Start", func() {
	// lost deploys through client and answers as if the answer were lost,
	// counting its calls.
	lost := func(client *bosh.Client, calls *int) func(context.Context) (bosh.Task, error) {
		return func(ctx context.Context) (bosh.Task, error) {
			*calls++
			if _, err := client.Deploy(ctx, []byte(running)); err != nil {
				return bosh.Task{}, err
			}
			return bosh.Task{}, errors.New("connection reset: the answer was lost")
		}
	}

	It("finds the task of an answer that was lost, instead of making a second", func() {
		_, client := newDirector()
		calls := 0
		task, err := operation.Start(context.Background(), "blacksmith-update-lost", client, nil, lost(client, &calls))
		Expect(err).NotTo(HaveOccurred())
		Expect(calls).To(Equal(1))
		Expect(task.ID).NotTo(BeZero())
		Expect(task.ContextID).To(Equal("blacksmith-update-lost"))
		tasks, err := client.Tasks(context.Background(), bosh.TaskQuery{ContextID: "blacksmith-update-lost"})
		Expect(err).NotTo(HaveOccurred())
		Expect(tasks).To(HaveLen(1))
	})

	It("never takes another deployment's task that carries the operation's context id", func() {
		director, client := newDirector()
		Expect(director.PutDeployment(strings.Replace(running, "name: redis-small-inst", "name: tenant-other", 1))).To(Succeed())
		ctx := context.Background()
		other, err := client.ChangeState(bosh.WithContextID(ctx, "blacksmith-update-stolen"), "tenant-other", bosh.StateStopped)
		Expect(err).NotTo(HaveOccurred(), "a tenant's task sent with the operation's context id")
		found, err := operation.Find(ctx, operation.OfDeployment(client, "redis-small-inst"), "blacksmith-update-stolen")
		Expect(err).NotTo(HaveOccurred())
		Expect(found.ID).To(BeZero(), "not the operation's")
		found, err = operation.Find(ctx, client, "blacksmith-update-stolen")
		Expect(err).NotTo(HaveOccurred())
		Expect(found.ID).To(Equal(other.ID), "found by the context id alone, as before")
	})

	It("asks before each retry and makes no second task", func() {
		_, client := newDirector()
		calls := 0
		attempts := func(ctx context.Context, try func(context.Context) error) error {
			var err error
			for range 3 {
				if err = try(ctx); err == nil {
					return nil
				}
			}
			return err
		}
		task, err := operation.Start(context.Background(), "blacksmith-update-retry", client, attempts, lost(client, &calls))
		Expect(err).NotTo(HaveOccurred())
		Expect(calls).To(Equal(1))
		Expect(task.ContextID).To(Equal("blacksmith-update-retry"))
	})

	It("does not look for a task the Director refused", func() {
		_, client := newDirector()
		_, err := operation.Start(context.Background(), strings.Repeat("x", 70), client, nil, func(ctx context.Context) (bosh.Task, error) {
			return client.Deploy(ctx, []byte(running))
		})
		var api *bosh.APIError
		Expect(errors.As(err, &api)).To(BeTrue())
		Expect(api.StatusCode).To(Equal(400))
	})
})

var _ = Describe("Compare of a hostile manifest", func() {
	It("refuses a manifest of aliases of aliases rather than walking it for ever", func() {
		var b strings.Builder
		b.WriteString("l0: &l0 [x, x]\n")
		for i := 1; i < 40; i++ {
			fmt.Fprintf(&b, "l%d: &l%d [*l%d, *l%d]\n", i, i, i-1, i-1)
		}
		done := make(chan error, 1)
		go func() { _, err := operation.Compare(b.String(), "name: x\n"); done <- err }()
		Eventually(done, 10*time.Second).Should(Receive(MatchError(ContainSubstring("more than 1000000 values"))))
	})
})
