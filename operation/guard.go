package operation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Guard judges the changes of one deploy: every guarded change (Guarded)
// refuses it, unless the operation means it (Expected, by class and path)
// or the operator allowed its class for this instance (Allow).
type Guard struct {
	// Operation names the operation in the refusal ("update", "upgrade").
	Operation string
	// Expected are the changes the operation means (Compare of the
	// renderings before and after what it asks); nil: none.
	Expected []Change
	// Allow are the classes an operator allowed for this instance.
	Allow []Class
	// All means every change: a rollback to the backup taken just before
	// the deploy it undoes.
	All bool
}

// RefusedError is an operation the guard refused before anything was
// deployed: Changes are the guarded changes it did not mean.
type RefusedError struct {
	Operation string
	Changes   []Change
}

// Error names each change, for the operator and the platform user alike
// (values of secrets are never in a Change).
func (e *RefusedError) Error() string {
	parts := make([]string, 0, len(e.Changes))
	for i, c := range e.Changes {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Changes)-10))
			break
		}
		parts = append(parts, c.String())
	}
	return fmt.Sprintf("the %s would change what it does not mean to, and was refused before anything was deployed: %s",
		e.Operation, strings.Join(parts, "; "))
}

// Classes are the classes the refusal names, each once, in order.
func (e *RefusedError) Classes() []Class {
	var out []Class
	for _, c := range e.Changes {
		if !slices.Contains(out, c.Class) {
			out = append(out, c.Class)
		}
	}
	return out
}

// Check answers the guarded changes that changes holds and the operation
// neither means nor is allowed, as a *RefusedError; nil when there is none.
// allowed are the guarded changes it let through because of Allow (to be
// recorded in the instance's history).
func (g Guard) Check(changes []Change) (allowed []Change, err error) {
	meant := map[string]bool{}
	for _, c := range g.Expected {
		meant[c.key()] = true
	}
	var refused []Change
	for _, c := range changes {
		switch {
		case !c.Class.IsGuarded() || meant[c.key()] || g.All:
		case slices.Contains(g.Allow, c.Class):
			allowed = append(allowed, c)
		default:
			refused = append(refused, c)
		}
	}
	if len(refused) > 0 {
		return allowed, &RefusedError{Operation: g.Operation, Changes: refused}
	}
	return allowed, nil
}

// Summary is a diff's changes for an instance's history and the dry runs:
// the instance groups, properties (by key), releases and stemcells it
// changes, and its guarded changes, each a comma-separated list (at most
// 20 names and a count), plus the number of changes.
func Summary(changes []Change) map[string]string {
	lists := map[string][]string{}
	add := func(k, v string) {
		if !slices.Contains(lists[k], v) {
			lists[k] = append(lists[k], v)
		}
	}
	for _, c := range changes {
		parts := strings.Split(c.Path, "/")
		if len(parts) >= 2 && parts[0] == "instance_groups" {
			add("groups", parts[1])
		}
		switch {
		case c.Class.IsGuarded():
			add("guarded", string(c.Class)+" "+c.Path)
		case c.Class == Property:
			add("properties", parts[len(parts)-1])
		case c.Class == Release && len(parts) > 1:
			add("releases", parts[1])
		case c.Class == Stemcell && len(parts) > 1:
			add("stemcells", parts[1])
		}
	}
	out := map[string]string{"changes": strconv.Itoa(len(changes))}
	for k, v := range lists {
		if len(v) > 20 {
			v = append(v[:20:20], fmt.Sprintf("and %d more", len(v)-20))
		}
		out["diff_"+k] = strings.Join(v, ", ")
	}
	return out
}
