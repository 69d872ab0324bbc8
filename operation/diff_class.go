package operation

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

// groups are the instance groups a diff removes (errands among them) and adds.
type groups struct{ removed, added, errands map[string]bool }

// classOf is the change an entry makes; false when it makes none worth
// naming apart (an added line whose removal was named already).
func classOf(e entry, g groups, numbers map[string][2]string) (Change, bool) {
	path := strings.Join(e.path, "/")
	where := path
	if e.key != "" && !e.item {
		where = strings.Join(append(slices.Clone(e.path), e.key), "/")
	}
	verb := "added"
	if e.removed {
		verb = "removed"
	}
	top := ""
	if len(e.path) > 0 {
		top = e.path[0]
	}
	if top == "instance_groups" && len(e.path) >= 2 {
		switch group := e.path[1]; {
		case g.removed[group] && g.errands[group]:
			return Change{Errand, "instance_groups/" + group, "the errand " + group + " removed"}, true
		case g.removed[group]:
			return Change{InstanceGroup, "instance_groups/" + group, "the instance group " + group + " removed"}, true
		case g.added[group]:
			return Change{Other, "instance_groups/" + group, "the instance group " + group + " added"}, true
		}
	}
	switch {
	case e.removed && variableRef.MatchString(e.value):
		return Change{Variable, where, "the configuration-server variable " + variableRef.FindString(e.value) + " replaced or removed"}, true
	case top == "variables" && e.removed && e.item:
		return Change{Variable, path, "the variable's definition removed"}, true
	case top == "variables":
		return Change{Other, path, "a variable's definition " + verb}, true
	case top == "releases":
		return Change{Release, path, verb + " " + describe(e)}, true
	case top == "stemcells":
		return Change{Stemcell, path, verb + " " + describe(e)}, true
	case top == "properties" || top == "addons" && containsAny(e.path, "properties"):
		return propertyChange(e, where, verb), true
	case top != "instance_groups" || len(e.path) < 2:
		if top == "networks" || top == "azs" {
			return Change{Other, path, "the cloud config's " + top + " " + verb + " (cloud config changed since the last deploy)"}, true
		}
		return Change{Other, where, verb + " " + describe(e)}, true
	}
	group := e.path[1]
	rest := e.path[2:]
	switch {
	case containsAny(e.path, "properties") || e.key == "properties":
		return propertyChange(e, where, verb), true
	case len(rest) > 0 && rest[0] == "networks" || e.key == "networks":
		return Change{Network, "instance_groups/" + group + "/networks", "networks " + verb + " " + describe(e)}, true
	case len(rest) > 0 && rest[0] == "azs" || e.key == "azs":
		return Change{AZ, "instance_groups/" + group + "/azs", "azs " + verb + " " + describe(e)}, true
	case len(rest) == 2 && rest[0] == "jobs" && e.item && e.removed:
		return Change{Job, path, "the job " + rest[1] + " removed"}, true
	case len(rest) == 0 && e.key == "instances":
		p := numbers[where]
		before, errB := strconv.Atoi(p[0])
		after, errA := strconv.Atoi(p[1])
		if errB == nil && (errA != nil || after < before) {
			return Change{Instances, where, fmt.Sprintf("instances %s -> %s", p[0], orNone(p[1]))}, e.removed
		}
		return Change{Other, where, fmt.Sprintf("instances %s -> %s", orNone(p[0]), orNone(p[1]))}, !e.removed || errA != nil
	case len(rest) == 0 && strings.HasPrefix(e.key, "persistent_disk") || len(rest) > 0 && strings.HasPrefix(rest[0], "persistent_disk"):
		return diskChange(e, where, numbers), true
	}
	return Change{Other, where, verb + " " + describe(e)}, true
}

// propertyChange names a property's change by key; a secret's value is
// never shown.
func propertyChange(e entry, where, verb string) Change {
	if e.removed && secretKey.MatchString(e.key) && e.value != "" {
		return Change{Secret, where, "the value of " + e.key + " changed or removed"}
	}
	if secretKey.MatchString(e.key) {
		return Change{Property, where, e.key + " " + verb}
	}
	return Change{Property, where, verb + " " + describe(e)}
}

// diskChange: a larger persistent_disk is growth (not guarded); anything
// else about a disk (smaller, removed, another type) is.
func diskChange(e entry, where string, numbers map[string][2]string) Change {
	p := numbers[where]
	before, errB := strconv.Atoi(p[0])
	after, errA := strconv.Atoi(p[1])
	switch {
	case errB == nil && errA == nil && after >= before:
		return Change{Other, where, fmt.Sprintf("persistent disk grows %d -> %d", before, after)}
	case p[0] == "" && !e.removed:
		return Change{Other, where, "a persistent disk added: " + describe(e)}
	}
	return Change{Disk, where, fmt.Sprintf("persistent disk %s -> %s", orNone(p[0]), orNone(p[1]))}
}

func containsAny(path []string, name string) bool { return slices.Contains(path, name) }

func orNone(s string) string { return cmp.Or(s, "none") }

// describe shows an entry for a message, bounded.
func describe(e entry) string {
	s := e.value
	if e.key != "" {
		s = e.key + ": " + e.value
	}
	if variableRef.MatchString(s) {
		return s
	}
	return strings.ToValidUTF8(textcut.Marked(s, 80, "..."), "?")
}
