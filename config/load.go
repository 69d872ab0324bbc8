package config

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"reflect"

	"gopkg.in/yaml.v3"
)

// sources records where each key's value came from, so that a validation
// problem can point at the file line or the variable to fix.
type sources struct {
	line map[string]int    // dotted key -> line in the file
	env  map[string]string // dotted key -> environment variable
}

// Load reads the configuration: defaults, then the file at path (skipped when
// path is ""), then the environment as env reports it (os.LookupEnv in
// production; nil means an empty environment). The result is validated.
// On any problem it returns nil and a *Problems listing every one.
func Load(path string, env func(string) (string, bool)) (*Config, error) {
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	c := Default()
	problems := &Problems{}
	src := sources{line: map[string]int{}, env: map[string]string{}}
	if path != "" {
		loadFile(path, c, problems, src.line)
	}
	applyEnv(c, env, problems, src.env)
	normalize(c)
	if len(c.Reconciler.Ignore) == 0 {
		c.Reconciler.Ignore = nil // "ignore: []" and no key mean the same
	}
	if len(c.Notifications.Webhooks) == 0 {
		c.Notifications.Webhooks = nil
	}
	validate(c, checker{problems: problems, src: src})
	if err := problems.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// loadFile decodes the file onto c, recording every problem.
func loadFile(path string, c *Config, problems *Problems, lines map[string]int) {
	data, err := os.ReadFile(path)
	if err != nil {
		msg := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		problems.List = append(problems.List, Problem{Key: path, Message: "cannot read: " + msg, Err: err})
		return
	}
	root, ok := parseDocument(path, data, problems)
	if !ok {
		return
	}
	if root.Kind != yaml.MappingNode {
		problems.add(path, root.Line, "expected a mapping of sections at the top, got %s", describe(root))
		return
	}
	d := decoder{problems: problems, lines: lines}
	d.mapping(root, reflect.ValueOf(c).Elem(), "")
}

// parseDocument parses the single YAML document in data. An empty file is a
// null document. It reports syntax errors and extra documents.
func parseDocument(path string, data []byte, problems *Problems) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, false
		}
		problems.List = append(problems.List, Problem{Key: path, Message: err.Error(), Err: err})
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		problems.add(path, extra.Line, "holds more than one YAML document")
		return nil, false
	}
	if len(doc.Content) == 0 {
		return nil, false
	}
	root := resolve(doc.Content[0])
	return root, !isNull(root)
}
