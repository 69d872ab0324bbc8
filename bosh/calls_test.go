package bosh_test

import (
	"context"
	"errors"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("Client calls against the simulator", func() {
	var (
		d   *sim.Director
		c   *bosh.Client
		ctx context.Context
	)

	BeforeEach(func() {
		d = startDirector(sim.Options{TaskDuration: 50 * time.Millisecond, AgentTimeout: 10 * time.Millisecond})
		c = newClient(d)
		ctx = ctxFor(30 * time.Second)
		Expect(d.PutDeployment(manifest("redis-a"))).To(Succeed())
	})

	It("stops a deployment hard and starts it again as the bosh CLI does, each a task under the context id", func() {
		vms, err := c.VMs(ctx, "redis-a")
		Expect(err).NotTo(HaveOccurred())
		Expect(vms).NotTo(BeEmpty())
		d.ResetStats()
		t, err := c.ChangeState(bosh.WithContextID(ctx, "ctx-stop-1"), "redis-a", bosh.StateDetached)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Stats().Requests).To(HaveKeyWithValue("PUT /deployments/:name/jobs/:job", 1))
		t, err = c.WaitTask(ctx, t.ID, 20*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Succeeded()).To(BeTrue(), "%+v", t)
		Expect(t.ContextID).To(Equal("ctx-stop-1"))
		Expect(c.VMs(ctx, "redis-a")).To(BeEmpty(), "a hard stop deletes the VMs")
		inst, err := c.Instances(ctx, "redis-a")
		Expect(err).NotTo(HaveOccurred())
		Expect(inst).To(ContainElement(And(HaveField("Job", vms[0].Job), HaveField("ID", vms[0].ID), HaveField("CID", ""))),
			"and keeps the instances, without VMs")

		t, err = c.ChangeState(ctx, "redis-a", bosh.StateStarted)
		Expect(err).NotTo(HaveOccurred())
		t, err = c.WaitTask(ctx, t.ID, 20*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Succeeded()).To(BeTrue())
		Expect(c.VMs(ctx, "redis-a")).To(HaveLen(len(vms)))

		_, err = c.ChangeState(ctx, "redis-a", "paused")
		Expect(err).To(MatchError(ContainSubstring(`unknown state "paused"`)))
		_, err = c.ChangeState(ctx, "nope", bosh.StateStopped)
		Expect(err).To(MatchError(bosh.ErrDeploymentNotFound))
	})

	It("reads /info without credentials", func() {
		info, err := bosh.New(bosh.Options{Address: d.URL(), ClientID: "x", ClientSecret: "y"})
		Expect(err).NotTo(HaveOccurred())
		got, err := info.Info(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Name).To(Equal(sim.DefaultName))
		Expect(got.UserAuthentication.Type).To(Equal("basic"))
	})

	It("reads the VMs' states from their agents through a vm-state task, in three requests when it ends within a poll", func() {
		ids := d.InstanceIDs("redis-a", "")
		Expect(ids).NotTo(BeEmpty())
		Expect(d.SetAgent("redis-a", ids[0], sim.AgentFailing)).To(Succeed())
		_, err := c.Deployments(ctx) // authentication detected
		Expect(err).NotTo(HaveOccurred())
		d.ResetStats()
		states, err := c.VMStates(ctx, "redis-a", 100*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Stats().Requests).To(Equal(map[string]int{"GET /deployments/:name/vms": 1, "GET /tasks/:id": 1, "GET /tasks/:id/output": 1}))
		Expect(states).NotTo(BeEmpty())
		Expect(states[0]).To(And(HaveField("ID", ids[0]), HaveField("JobState", "failing"), HaveField("State", "started")))
		Expect(states[0].Running()).To(BeFalse(), "a process fails: %+v", states[0].Processes)

		Expect(d.SetAgent("redis-a", ids[0], sim.AgentUnresponsive)).To(Succeed())
		states, err = c.VMStates(ctx, "redis-a", 100*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(states[0]).To(HaveField("JobState", bosh.JobUnresponsiveAgent))
		Expect(states[0].Running()).To(BeFalse())

		_, err = c.VMStates(ctx, "nope", 0)
		Expect(err).To(MatchError(bosh.ErrDeploymentNotFound))
	})

	It("lists deployments in the cheap form: releases and locks kept, configs and stemcells excluded", func() {
		names := d.SeedDeployments(3, nil)
		list, err := c.Deployments(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(list).To(HaveLen(4))
		Expect(list).To(ContainElement(And(
			HaveField("Name", "redis-a"),
			HaveField("Releases", ConsistOf(HaveField("Name", "redis"))),
		)))
		for _, dep := range list {
			Expect(dep.Stemcells).To(BeEmpty(), "stemcells must be excluded")
			Expect(dep.CloudConfig).To(BeEmpty(), "configs must be excluded")
			Expect(dep.Releases).NotTo(BeEmpty(), "releases must be kept")
			Expect(dep.Locked).To(BeFalse())
		}
		Expect(list).To(ContainElement(HaveField("Name", names[0])))
	})

	It("shows a deployment locked while its task runs", func() {
		d.Knobs().SetTaskDuration(10 * time.Second)
		_, err := c.Deploy(ctx, []byte(manifest("redis-a")))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []bosh.Deployment {
			list, _ := c.Deployments(ctx)
			return list
		}).Should(ContainElement(And(HaveField("Name", "redis-a"), HaveField("Locked", true))))
	})

	It("returns a manifest byte for byte, and ErrDeploymentNotFound with the Director's code", func() {
		m, err := c.Manifest(ctx, "redis-a")
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(manifest("redis-a")))

		_, err = c.Manifest(ctx, "no-such-deployment")
		Expect(err).To(MatchError(bosh.ErrDeploymentNotFound))
		var apiErr *bosh.APIError
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Expect(apiErr.StatusCode).To(Equal(404))
		Expect(apiErr.Code).To(Equal(70000))
		Expect(apiErr.Description).To(Equal("Deployment 'no-such-deployment' doesn't exist"))
	})

	It("lists VMs from plain /vms, which creates no task", func() {
		vms, err := c.VMs(ctx, "redis-a")
		Expect(err).NotTo(HaveOccurred())
		Expect(vms).To(HaveLen(2))
		for _, vm := range vms {
			Expect(vm.Job).To(Equal("redis"))
			Expect(vm.AgentID).NotTo(BeEmpty())
			Expect(vm.CID).To(HavePrefix("vm-"))
			Expect(vm.IPs).To(HaveLen(1))
			Expect(vm.Active).To(BeTrue())
			Expect(vm.VMCreatedAt).To(BeNumerically("~", time.Now().Unix(), 120))
		}
		Expect(vms).To(ConsistOf(HaveField("AZ", "z1"), HaveField("AZ", "z2")))
		stats := d.Stats()
		Expect(stats.Requests).To(HaveKeyWithValue("GET /deployments/:name/vms", 1))
		Expect(stats.Tasks).To(BeZero(), "format=full would have started a task")

		_, err = c.VMs(ctx, "no-such-deployment")
		Expect(err).To(MatchError(bosh.ErrDeploymentNotFound))
	})

	It("lists instances, those without a VM included", func() {
		instances, err := c.Instances(ctx, "redis-a")
		Expect(err).NotTo(HaveOccurred())
		Expect(instances).To(HaveLen(3))
		Expect(instances).To(ContainElement(And(
			HaveField("Job", "smoke-tests"), HaveField("ExpectsVM", false),
			HaveField("AgentID", ""), HaveField("CID", ""), HaveField("IPs", BeEmpty()),
		)))
		Expect(instances).To(ContainElement(And(
			HaveField("Job", "redis"), HaveField("Index", 1), HaveField("ExpectsVM", true), HaveField("AgentID", Not(BeEmpty())),
		)))
		Expect(d.Stats().Tasks).To(BeZero())
	})

	It("deploys a manifest through a task, and deletes the deployment through another", func() {
		text := manifest("redis-b")
		task, err := c.Deploy(ctx, []byte(text))
		Expect(err).NotTo(HaveOccurred())
		Expect(task.ID).To(BeNumerically(">", 0))
		Expect(task.Description).To(Equal("create deployment"))
		Expect(task.Deployment).To(Equal("redis-b"))
		Expect(task.User).To(Equal(sim.DefaultUsername))

		done, err := c.WaitTask(ctx, task.ID, 20*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(done.State).To(Equal(bosh.TaskDone))
		Expect(done.Succeeded()).To(BeTrue())
		Expect(done.Timestamp).To(BeNumerically(">=", done.StartedAt))
		Expect(done.Result).To(Equal("/deployments/redis-b"))
		Expect(c.Manifest(ctx, "redis-b")).To(Equal(text))

		del, err := c.DeleteDeployment(ctx, "redis-b", true)
		Expect(err).NotTo(HaveOccurred())
		Expect(del.ID).To(BeNumerically(">", task.ID))
		Expect(del.Description).To(Equal("delete deployment redis-b"))
		Expect(c.WaitTask(ctx, del.ID, 20*time.Millisecond)).To(HaveField("State", bosh.TaskDone))
		_, err = c.Manifest(ctx, "redis-b")
		Expect(err).To(MatchError(bosh.ErrDeploymentNotFound))
	})

	It("returns the task's id beside the error when the task was created but could not be read", func() {
		Expect(d.Faults().Inject(sim.Failure{Endpoint: "GET /tasks/:id", Status: 503, Count: 1})).To(Succeed())
		task, err := c.Deploy(ctx, []byte(manifest("redis-lost")))
		Expect(err).To(MatchError(ContainSubstring("status 503")))
		Expect(task.ID).To(BeNumerically(">", 0))
		Expect(d.Stats().Tasks).To(Equal(1))
		Expect(c.Task(ctx, task.ID)).To(HaveField("Deployment", "redis-lost"))
	})

	It("refuses an empty deployment name without sending a request", func() {
		_, err := c.Manifest(ctx, "")
		Expect(err).To(MatchError(ContainSubstring("the deployment name is empty")))
		_, err = c.VMs(ctx, "")
		Expect(err).To(MatchError(ContainSubstring("listing VMs of deployment : the deployment name is empty")))
		_, err = c.Instances(ctx, "")
		Expect(err).To(MatchError(ContainSubstring("the deployment name is empty")))
		_, err = c.DeleteDeployment(ctx, "", true)
		Expect(err).To(MatchError(ContainSubstring("deleting deployment: the deployment name is empty")))
		Expect(d.Stats().Requests).To(BeEmpty())
		Expect(d.Stats().Tasks).To(BeZero())
	})

	It("surfaces the Director's refusal of a context id longer than 64 characters", func() {
		_, err := c.Deployments(bosh.WithContextID(ctx, strings.Repeat("x", 65)))
		var apiErr *bosh.APIError
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.StatusCode).To(Equal(400))
		Expect(apiErr.Code).To(Equal(190024))
		Expect(err.Error()).To(ContainSubstring("X-Bosh-Context-Id cannot be more than 64 characters"))
	})

	It("surfaces a manifest the Director refuses at once", func() {
		_, err := c.Deploy(ctx, []byte("releases: []\n"))
		var apiErr *bosh.APIError
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.StatusCode).To(Equal(400))
		Expect(apiErr.Code).To(Equal(40001))
		Expect(err.Error()).To(ContainSubstring("Deployment manifest must have a 'name' key"))
		Expect(d.Stats().Tasks).To(BeZero())
	})

	It("gets a task, and ErrTaskNotFound for an unknown one", func() {
		created, err := c.Deploy(ctx, []byte(manifest("redis-c")))
		Expect(err).NotTo(HaveOccurred())
		task, err := c.Task(ctx, created.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(task.ID).To(Equal(created.ID))
		Expect(task.Deployment).To(Equal("redis-c"))

		_, err = c.Task(ctx, 999999)
		Expect(err).To(MatchError(bosh.ErrTaskNotFound))
		Expect(err).NotTo(MatchError(bosh.ErrDeploymentNotFound))
	})

	It("reads a task's events", func() {
		task, err := c.Deploy(ctx, []byte(manifest("redis-d")))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.WaitTask(ctx, task.ID, 20*time.Millisecond)).To(HaveField("State", bosh.TaskDone))
		events, err := c.TaskEvents(ctx, task.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(events).NotTo(BeEmpty())
		Expect(events[0].State).To(Equal("started"))
		Expect(events[len(events)-1].State).To(Equal("finished"))
		Expect(events).To(ContainElement(HaveField("Stage", "Preparing deployment")))

		_, err = c.TaskEvents(ctx, 999999)
		Expect(err).To(MatchError(bosh.ErrTaskNotFound))
	})

	It("lists recent tasks by deployment, state and limit, newest first", func() {
		first, err := c.Deploy(ctx, []byte(manifest("redis-e")))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.WaitTask(ctx, first.ID, 20*time.Millisecond)).To(HaveField("State", bosh.TaskDone))
		d.Knobs().SetTaskDuration(10 * time.Second)
		second, err := c.Deploy(ctx, []byte(manifest("redis-e")))
		Expect(err).NotTo(HaveOccurred())
		_, err = c.Deploy(ctx, []byte(manifest("redis-f")))
		Expect(err).NotTo(HaveOccurred())

		tasks, err := c.Tasks(ctx, bosh.TaskQuery{Deployment: "redis-e"})
		Expect(err).NotTo(HaveOccurred())
		Expect(tasks).To(HaveLen(2))
		Expect(tasks[0].ID).To(Equal(second.ID))
		Expect(tasks[1].ID).To(Equal(first.ID))

		running, err := c.Tasks(ctx, bosh.TaskQuery{Deployment: "redis-e", States: []string{bosh.TaskQueued, bosh.TaskProcessing}})
		Expect(err).NotTo(HaveOccurred())
		Expect(running).To(ConsistOf(HaveField("ID", second.ID)))

		limited, err := c.Tasks(ctx, bosh.TaskQuery{Limit: 1})
		Expect(err).NotTo(HaveOccurred())
		Expect(limited).To(ConsistOf(HaveField("Deployment", "redis-f")))
	})

	It("carries X-Bosh-Context-Id on the requests of a context that has one", func() {
		tagged := bosh.WithContextID(ctx, "reconciler-run-42")
		deployed, err := c.Deploy(tagged, []byte(manifest("redis-g")))
		Expect(err).NotTo(HaveOccurred())
		Expect(deployed.ContextID).To(Equal("reconciler-run-42"))
		deleted, err := c.DeleteDeployment(tagged, "redis-a", false)
		Expect(err).NotTo(HaveOccurred())
		untagged, err := c.Deploy(ctx, []byte(manifest("redis-h")))
		Expect(err).NotTo(HaveOccurred())
		Expect(untagged.ContextID).To(BeEmpty())

		tasks, err := c.Tasks(ctx, bosh.TaskQuery{ContextID: "reconciler-run-42"})
		Expect(err).NotTo(HaveOccurred())
		Expect(tasks).To(ConsistOf(HaveField("ID", deployed.ID), HaveField("ID", deleted.ID)))
	})
})
