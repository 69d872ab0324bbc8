package sim

import "fmt"

// Targets of a deploy's instance changes, beside the states of jobstates.go.
const (
	changeCreate = "create" // a new instance: its VM created, then updated
	changeUpdate = "update" // an instance of a changed manifest or cloud config
	changeDelete = "delete" // an instance the new manifest no longer has
)

// deployChangesLocked lists what a deploy changes, in the order the
// Director goes: the instances the new manifest drops (deleted), then
// those it adds (created) and, when the manifest or the cloud config
// changed, every other instance with a VM (updated). An unchanged deploy
// changes nothing.
func (ch *changer) deployChangesLocked(t *task) []*instChange {
	cur := ch.db.deployments[t.deployment]
	next := &deployment{name: t.deployment, content: t.content}
	if cur != nil {
		next.inst = cur.inst
	}
	old := map[string]bool{}
	for _, in := range instancesOf(cur) {
		old[in.id] = true
	}
	unchanged := cur != nil && cur.content != nil && cur.manifestText() == t.manifest &&
		cur.cloudConfig == ch.configs.latestCloudLocked()
	kept := map[string]bool{}
	var deleted, updated []*instChange
	for _, in := range instancesOf(next) {
		kept[in.id] = true
		switch {
		case !in.expectsVM: // errands and detached instances
		case !old[in.id]:
			updated = append(updated, &instChange{in: in, target: changeCreate})
		case !unchanged:
			updated = append(updated, &instChange{in: in, target: changeUpdate})
		}
	}
	for _, in := range instancesOf(cur) {
		if !kept[in.id] {
			deleted = append(deleted, &instChange{in: in, target: changeDelete})
		}
	}
	return append(append([]*instChange{}, deleted...), updated...)
}

// deployStages are the stages of a deploy's changes: "Deleting unneeded
// instances" for each instance dropped, "Creating missing vms" for the new
// ones, then "Updating instance" for each new or updated one (the first of
// each group as canary).
func deployStages(changes []*instChange) []stage {
	var deleted, created, updated []*instChange
	for _, c := range changes {
		switch c.target {
		case changeDelete:
			deleted = append(deleted, c)
		case changeCreate:
			created = append(created, c)
			updated = append(updated, c)
		default:
			updated = append(updated, c)
		}
	}
	var out []stage
	for _, group := range [][]*instChange{deleted, created} {
		for i, c := range group {
			s := stage{stage: "Deleting unneeded instances", task: fmt.Sprintf("%s (%d)", c.in.name(), c.in.index),
				tags: []string{c.in.job}, index: i + 1, total: len(group), change: c}
			if c.target == changeCreate {
				s.stage, s.tags, s.change = "Creating missing vms", []string{}, nil // its events come with its update
			}
			out = append(out, s)
		}
	}
	return append(out, changeStages(updated)...)
}
