package sim

// The Director's test-facing methods: each hands its work to the part that
// holds the resource. The admin API under /_sim/ calls the same parts.

// Knobs are the settings tests turn at run time: latency, task duration,
// token lifetime, events kept.
func (d *Director) Knobs() *Knobs { return d.knobs }

// Faults are the failures injected into the Director's answers.
func (d *Director) Faults() *Faults { return d.faults }

// SeedDeployments creates n deployments at once, without tasks, each with
// one create event by AdminUser (no end event: seeding stays cheap), drawn
// in turn from plans (default: Options.SeedPlans). Each is named
// "{planID}-{uuid}" and has a realistic manifest with
// properties.blacksmith{service_id, plan_id, instance_id}, the plan's
// release, a stemcell and instance groups with VMs. It returns the names.
// Plans that New would refuse are left out: with none left, it seeds nothing
// and returns nil.
func (d *Director) SeedDeployments(n int, plans []SeedPlan) []string { return d.deploys.seed(n, plans) }

// PutDeployment creates or replaces a deployment at once, without a task,
// as if it had been changed behind the broker's back: it records the
// events of a deploy by AdminUser without a task (create or update, at
// start and at end). The manifest is kept byte for byte; an invalid one
// matches ErrInvalidManifest.
func (d *Director) PutDeployment(manifest string) error { return d.deploys.put(manifest) }

// RemoveDeployment deletes a deployment at once, without a task, recording
// the events of a delete by AdminUser (at start and at end). A deployment
// that does not exist is left alone, and nothing is recorded.
func (d *Director) RemoveDeployment(name string) { d.deploys.remove(name) }

// RemoveAllDeployments deletes every deployment at once, recording one
// delete event by AdminUser for each, in the order of their names.
func (d *Director) RemoveAllDeployments() { d.deploys.removeAll() }

// SetCloudConfig uploads a new default cloud config: deployments deployed
// before it show cloud_config "outdated".
func (d *Director) SetCloudConfig(content string) { d.configs.setCloud(content) }

// UploadRelease records a release version as uploaded (as bosh
// upload-release would), so that a deploy naming it passes the check of
// Options.Releases; it is listed by GET /releases.
func (d *Director) UploadRelease(name, version string) { d.artifacts.uploadRelease(name, version) }

// UploadStemcell records a stemcell version of an operating system as
// uploaded (as bosh upload-stemcell would); it is listed by GET /stemcells.
func (d *Director) UploadStemcell(os, version string) { d.artifacts.uploadStemcell(os, version) }

// FailNextTask makes the next task created for deployment ("" = any
// deployment) end in error.
func (d *Director) FailNextTask(deployment string) { _ = d.board.endNext(deployment, StateError) }

// EndNextTask makes the next task created for deployment ("" = any
// deployment) end in state: StateError, StateTimeout or StateCancelled.
func (d *Director) EndNextTask(deployment, state string) error {
	return d.board.endNext(deployment, state)
}

// CancelTask cancels a task as DELETE /task/:id does: a queued task is
// cancelled at once, a processing one at its next checkpoint.
func (d *Director) CancelTask(id int) error { return d.board.cancel(id) }

// SetAgent makes an instance's agent answer as agent says (AgentRunning,
// AgentFailing or AgentUnresponsive), as a VM whose process dies or whose
// agent stops answering would, with no task. An agent that stops answering
// makes the Health Monitor post its alert event (user hm, object_type
// alert, the instance named), as its event_logger plugin does.
func (d *Director) SetAgent(deployment, instanceID, agent string) error {
	return d.health.setAgent(deployment, instanceID, agent)
}

// InstanceIDs lists the ids of a deployment's instances of group ("" = every
// group), in the order of its manifest.
func (d *Director) InstanceIDs(deployment, group string) []string {
	return d.health.instanceIDs(deployment, group)
}

// Resurrect recreates an instance's VM as the Health Monitor's resurrector
// has the Director do it, and returns once done: a "scan and fix" task by
// user hm that takes the deployment's lock at once and, when the
// instance's agent does not answer (the problem it resolves), deletes the
// VM and creates a new one (VM events only: the Director records no
// instance event for it), after which the agent answers again; the
// instance keeps its state.
func (d *Director) Resurrect(deployment, instanceID string) error {
	return d.health.resurrect(deployment, instanceID)
}

// RevokeTokens makes every token issued so far invalid, as a UAA key
// rotation would: the next request with one is answered 401.
func (d *Director) RevokeTokens() { d.gate.tokens.rotate() }

// Stats returns a snapshot of the counters.
func (d *Director) Stats() Stats { return d.meter.stats() }

// ResetStats zeroes the request, task and token counters.
func (d *Director) ResetStats() { d.meter.reset() }

// TaskLog lists the tasks created since the Director started or since the
// last ResetStats, oldest first, with when each began and ended to the
// nanosecond: the order and the overlap of what was asked of it.
func (d *Director) TaskLog() []TaskEntry { return d.meter.taskLog() }
