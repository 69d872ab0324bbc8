package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"gopkg.in/yaml.v3"
)

// setter decodes one field's value node, returning a message when it cannot.
type setter func(n *yaml.Node) string

// decodeFile reads the flat YAML mapping in path, handing each known field to
// its setter. Unknown, repeated and ill-typed fields are problems naming the
// field. A field with a null value counts as absent. It returns the fields
// that were given, each mapped to whether its value was good, and false when
// the file could not be read at all.
func decodeFile(path string, fields map[string]setter, problems *Problems) (map[string]bool, bool) {
	root, ok := readMapping(path, problems)
	if !ok {
		return nil, false
	}
	given := map[string]bool{}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		set, known := fields[key]
		switch {
		case !known:
			problems.add(path, key, "unknown field")
		case seen[key]:
			problems.add(path, key, "given more than once")
		case val.Kind == yaml.ScalarNode && val.Tag == "!!null":
		default:
			msg := set(val)
			given[key] = msg == ""
			if msg != "" {
				problems.add(path, key, "%s", msg)
			}
		}
		seen[key] = true
	}
	return given, true
}

// readMapping reads path and returns its top-level YAML mapping.
func readMapping(path string, problems *Problems) (*yaml.Node, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		reportRead(path, err, problems)
		return nil, false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		problems.List = append(problems.List, Problem{File: path, Message: err.Error(), Err: err})
		return nil, false
	}
	if len(doc.Content) == 0 {
		problems.add(path, "", "is empty")
		return nil, false
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		problems.add(path, "", "expected a mapping of fields")
		return nil, false
	}
	return root, true
}

func reportRead(path string, err error, problems *Problems) {
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	if errors.Is(err, fs.ErrNotExist) {
		msg = "missing"
	}
	problems.List = append(problems.List, Problem{File: path, Message: msg, Err: err})
}

func scalar(n *yaml.Node) (string, string) {
	if n.Kind != yaml.ScalarNode {
		return "", "expected a single value"
	}
	return n.Value, ""
}

func str(dst *string) setter {
	return func(n *yaml.Node) string {
		v, msg := scalar(n)
		if msg == "" {
			*dst = v
		}
		return msg
	}
}

func boolean(dst *bool) setter {
	return func(n *yaml.Node) string {
		v, msg := scalar(n)
		switch {
		case msg != "":
			return msg
		case v == "true":
			*dst = true
		case v == "false":
			*dst = false
		default:
			return fmt.Sprintf("not a boolean (true or false): %q", v)
		}
		return ""
	}
}

func integer(dst *int) setter {
	return func(n *yaml.Node) string {
		v, msg := scalar(n)
		if msg != "" {
			return msg
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Sprintf("not an integer: %q", v)
		}
		*dst = i
		return ""
	}
}

func stringList(dst *[]string) setter {
	return func(n *yaml.Node) string {
		if n.Kind != yaml.SequenceNode {
			return "expected a list"
		}
		out := make([]string, 0, len(n.Content))
		for i, item := range n.Content {
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				return fmt.Sprintf("item %d: expected a single value", i)
			}
			out = append(out, item.Value)
		}
		*dst = out
		return ""
	}
}
