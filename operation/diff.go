package operation

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// Class is the kind of a change a deploy makes.
type Class string

// The classes of change. The guarded ones (Guarded) refuse an operation
// unless it means them (Guard's expected changes) or an operator allowed
// them; the others are what upgrades and updates are for.
const (
	// Variable: a ((variable)) of the configuration server replaced by a
	// literal or removed, or a variable's definition removed.
	Variable Class = "variable"
	// Secret: the value of a property named like a secret (password,
	// secret, token, key, certificate, credential) changed or removed.
	Secret Class = "secret"
	// Errand: an errand (an instance group with lifecycle errand) removed.
	Errand Class = "errand"
	// InstanceGroup: an instance group removed.
	InstanceGroup Class = "instance-group"
	// Job: a job removed from an instance group.
	Job Class = "job"
	// Network: an instance group's networks changed (its VMs' addresses).
	Network Class = "network"
	// AZ: an instance group's availability zones changed.
	AZ Class = "az"
	// Disk: a persistent disk shrunk, removed or of another type.
	Disk Class = "disk"
	// Instances: fewer instances of a group.
	Instances Class = "instances"
	// Release, Stemcell, Property and Other are not guarded.
	Release  Class = "release"
	Stemcell Class = "stemcell"
	Property Class = "property"
	Other    Class = "other"
)

// Guarded are the classes an operation must mean or be allowed.
var Guarded = []Class{Variable, Secret, Errand, InstanceGroup, Job, Network, AZ, Disk, Instances}

// IsGuarded says whether c is among Guarded.
func (c Class) IsGuarded() bool { return slices.Contains(Guarded, c) }

// ParseClass reads an operator's allowance ("network", "az", ...).
func ParseClass(s string) (Class, error) {
	c := Class(strings.TrimSpace(s))
	if !c.IsGuarded() {
		names := make([]string, len(Guarded))
		for i, g := range Guarded {
			names[i] = string(g)
		}
		return "", fmt.Errorf("%q is not a class of guarded change (one of %s)", s, strings.Join(names, ", "))
	}
	return c, nil
}

// ParseClasses reads a comma-separated allowance ("network,az"), at most
// one of each class.
func ParseClasses(s string) ([]Class, error) {
	var out []Class
	for _, part := range strings.Split(s, ",") {
		c, err := ParseClass(part)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// KnownClasses are the guarded classes among names (an operator's
// allowance as Vault keeps it), each once; the others are dropped: an
// allowance allows nothing it does not name as this build knows it.
func KnownClasses(names []string) []Class {
	var out []Class
	for _, n := range names {
		if c, err := ParseClass(n); err == nil && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Change is one change a deploy would make.
type Change struct {
	Class Class `json:"class"`
	// Path locates it: top-level key, then keys and the names of named
	// list items, "/"-separated (e.g. "instance_groups/redis/networks").
	Path string `json:"path"`
	// Detail says what changes, values of secrets and variables left out.
	Detail string `json:"detail"`
}

func (c Change) String() string {
	return fmt.Sprintf("%s at %s: %s", c.Class, c.Path, c.Detail)
}

// key identifies a change for the expected set.
func (c Change) key() string { return string(c.Class) + "\x00" + c.Path }

// entry is a changed scalar: where it is, its key ("" for a list's scalar
// item), its value and whether it is removed or added.
type entry struct {
	path    []string
	key     string
	value   string
	removed bool
	item    bool // the line that starts a named list item (its "name")
}

// maxDiffLines bounds what a diff is read of: a Director's answer is
// bounded in bytes by the client; this bounds the work on it.
const maxDiffLines = 200_000

// Classify reads the Director's diff of a deploy over a deployment that
// runs into the changes it makes (a new deployment changes nothing that
// runs: Prepare does not classify its diff). A diff over maxDiffLines is
// one Other change saying so.
func Classify(lines []bosh.DiffLine) []Change {
	if len(lines) > maxDiffLines {
		return []Change{{Class: Other, Path: "", Detail: fmt.Sprintf("a diff of %d lines, over %d: not read", len(lines), maxDiffLines)}}
	}
	return classify(parseDiff(lines))
}

// frame is a line that holds the ones below it.
type frame struct {
	indent int
	name   string // "" for an unnamed list item
}

// parseDiff turns the diff's lines into entries, following indentation
// (a "- " item counts one more than its dash, so that its keys are its
// children, in the Ruby layout and in the indented one alike).
func parseDiff(lines []bosh.DiffLine) []entry {
	var stack []frame
	var out []entry
	for _, l := range lines {
		text := strings.TrimRight(l.Text, " ")
		body := strings.TrimLeft(text, " ")
		if body == "" {
			continue
		}
		indent := len(text) - len(body)
		item := strings.HasPrefix(body, "- ") || body == "-"
		if item {
			indent++
			body = strings.TrimSpace(strings.TrimPrefix(body, "-"))
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		key, value, isKey := splitKey(body)
		path := names(stack)
		if item {
			name := ""
			if isKey && key == "name" {
				name = unquote(value)
			}
			stack = append(stack, frame{indent: indent, name: name})
			if name != "" {
				path = names(stack)
			}
		}
		if isKey && value == "" && !item {
			stack = append(stack, frame{indent: indent, name: key})
		}
		if l.Change == "" {
			continue
		}
		e := entry{path: path, removed: l.Change == "removed", item: item && isKey && key == "name"}
		if isKey {
			e.key, e.value = key, unquote(value)
		} else {
			e.value = unquote(body)
		}
		out = append(out, e)
	}
	return out
}

func names(stack []frame) []string {
	out := make([]string, 0, len(stack))
	for _, f := range stack {
		if f.name != "" {
			out = append(out, f.name)
		}
	}
	return out
}

// keyLine is a YAML mapping line: a plain or quoted key, a colon, a value.
var keyLine = regexp.MustCompile(`^("(?:[^"\\]|\\.)*"|'[^']*'|[^\s:"'#][^:#]*?):(?:\s+(.*))?$`)

// splitKey splits "key: value" (value "" for "key:").
func splitKey(body string) (key, value string, ok bool) {
	m := keyLine.FindStringSubmatch(body)
	if m == nil {
		return "", "", false
	}
	return unquote(m[1]), strings.TrimSpace(m[2]), true
}

// unquote takes the quotes off a scalar written quoted.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"') {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}

// secretKey is a property key that names a secret.
var secretKey = regexp.MustCompile(`(?i)(password|passwd|secret|token|private_key|(^|_)key$|cert|credential)`)

// variableRef is a configuration-server reference.
var variableRef = regexp.MustCompile(`\(\(\s*[^()\s]+\s*\)\)`)

// classify turns entries into changes, one per class and path.
func classify(entries []entry) []Change {
	var out []Change
	seen := map[string]int{}
	add := func(c Change) {
		if i, ok := seen[c.key()]; ok {
			if !strings.Contains(out[i].Detail, c.Detail) && len(out[i].Detail) < 300 {
				out[i].Detail += "; " + c.Detail
			}
			return
		}
		seen[c.key()] = len(out)
		out = append(out, c)
	}
	removedGroups, addedGroups := map[string]bool{}, map[string]bool{}
	errands := map[string]bool{}
	for _, e := range entries {
		if len(e.path) == 2 && e.path[0] == "instance_groups" && e.item {
			if e.removed {
				removedGroups[e.path[1]] = true
			} else {
				addedGroups[e.path[1]] = true
			}
		}
		if len(e.path) == 2 && e.path[0] == "instance_groups" && e.key == "lifecycle" && e.value == "errand" && e.removed {
			errands[e.path[1]] = true
		}
	}
	numbers := pairs(entries)
	for _, e := range entries {
		if c, ok := classOf(e, groups{removedGroups, addedGroups, errands}, numbers); ok {
			add(c)
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int {
		return cmp.Or(cmp.Compare(btoi(!a.Class.IsGuarded()), btoi(!b.Class.IsGuarded())), cmp.Compare(a.Path, b.Path))
	})
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pairs is, for each path and key, the removed and added numbers (a
// scalar changed shows as both).
func pairs(entries []entry) map[string][2]string {
	out := map[string][2]string{}
	for _, e := range entries {
		if e.key == "" {
			continue
		}
		k := strings.Join(append(slices.Clone(e.path), e.key), "/")
		p := out[k]
		if e.removed {
			p[0] = e.value
		} else {
			p[1] = e.value
		}
		out[k] = p
	}
	return out
}
