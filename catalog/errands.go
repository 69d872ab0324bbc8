package catalog

import (
	"fmt"
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"
)

// maxLifecycleErrands bounds the errands of one lifecycle step of a plan.
const maxLifecycleErrands = 10

// errandName is what an errand's name may be: an instance group's or a
// job's name, as BOSH takes them.
var errandName = regexp.MustCompile(`\A[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\z`)

// lifecycleErrands decodes plan.yml's lifecycle_errands: {post_deploy:
// [NAME...], pre_delete: [NAME...]}: the errands the broker runs, in order,
// after a provision or an update of the plan's instances has deployed, and
// before a deprovision deletes one.
func lifecycleErrands(postDeploy, preDelete *[]string) setter {
	return func(n *yaml.Node) string {
		if n.Kind != yaml.MappingNode {
			return "must be a mapping: {post_deploy: [errand names], pre_delete: [errand names]}"
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			switch key {
			case "post_deploy":
				names, msg := errandNames(val)
				if msg != "" {
					return "post_deploy " + msg
				}
				*postDeploy = names
			case "pre_delete":
				names, msg := errandNames(val)
				if msg != "" {
					return "pre_delete " + msg
				}
				*preDelete = names
			default:
				return fmt.Sprintf("unknown step %q (post_deploy and pre_delete are known)", key)
			}
		}
		return ""
	}
}

// errandNames reads a list of errand names: each a name BOSH takes, once,
// at most maxLifecycleErrands.
func errandNames(n *yaml.Node) ([]string, string) {
	if n.Kind != yaml.SequenceNode {
		return nil, "must be a list of errand names"
	}
	if len(n.Content) > maxLifecycleErrands {
		return nil, fmt.Sprintf("names %d errands, at most %d", len(n.Content), maxLifecycleErrands)
	}
	var out []string
	for _, item := range n.Content {
		if item.Kind != yaml.ScalarNode || !errandName.MatchString(item.Value) {
			return nil, fmt.Sprintf("names %.64q, not an errand name (letters, digits, '_', '.', '-')", item.Value)
		}
		if slices.Contains(out, item.Value) {
			return nil, fmt.Sprintf("names %q twice", item.Value)
		}
		out = append(out, item.Value)
	}
	return out, ""
}
