package sim

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrInvalidManifest matches every manifest the simulator refuses.
var ErrInvalidManifest = errors.New("invalid manifest")

// manifestError is a refused manifest with the Director's error code.
type manifestError struct {
	code int
	msg  string
}

// Error is the Director's description of the refusal.
func (e *manifestError) Error() string { return e.msg }

// Is makes every refused manifest match ErrInvalidManifest.
func (e *manifestError) Is(target error) bool { return target == ErrInvalidManifest }

// errMissingName is answered synchronously (400) rather than through a task.
var errMissingName = &manifestError{code: codeMissingField, msg: "Deployment manifest must have a 'name' key"}

// manifestDoc is the part of a deployment manifest the simulator reads.
type manifestDoc struct {
	Releases []struct {
		Name    string `yaml:"name"`
		Version string `yaml:"version"`
	} `yaml:"releases"`
	Stemcells []struct {
		Alias   string `yaml:"alias"`
		OS      string `yaml:"os"`
		Name    string `yaml:"name"`
		Version string `yaml:"version"`
	} `yaml:"stemcells"`
	InstanceGroups []groupDoc `yaml:"instance_groups"`
}

type groupDoc struct {
	Name      string   `yaml:"name"`
	Instances *int     `yaml:"instances"`
	AZs       []string `yaml:"azs"`
	Jobs      []struct {
		Name    string `yaml:"name"`
		Release string `yaml:"release"`
	} `yaml:"jobs"`
	VMType             string    `yaml:"vm_type"`
	VMResources        yaml.Node `yaml:"vm_resources"`
	VMExtensions       []string  `yaml:"vm_extensions"`
	Stemcell           string    `yaml:"stemcell"`
	Lifecycle          string    `yaml:"lifecycle"`
	PersistentDisk     int       `yaml:"persistent_disk"`
	PersistentDiskType string    `yaml:"persistent_disk_type"`
	Networks           []struct {
		Name      string   `yaml:"name"`
		StaticIPs []string `yaml:"static_ips"`
	} `yaml:"networks"`
}

// parseManifest reads a posted manifest. The name is returned whenever the
// YAML has one, even when the manifest is refused for another reason.
func parseManifest(text string) (string, *manifestDoc, error) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(text), &root); err != nil {
		return "", nil, &manifestError{code: codeBadManifest,
			msg: fmt.Sprintf("Incorrect YAML structure of the uploaded manifest: %v", err)}
	}
	name := nameOf(&root)
	if name == "" {
		return "", nil, errMissingName
	}
	var doc manifestDoc
	if err := root.Decode(&doc); err != nil {
		return name, nil, &manifestError{code: codeValidationType,
			msg: "Manifest has properties of the wrong type: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if err := doc.validate(); err != nil {
		return name, nil, err
	}
	return name, &doc, nil
}

// nameOf is the top-level scalar "name" of a YAML document, or "".
func nameOf(root *yaml.Node) string {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return ""
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Value == "name" && v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
			return v.Value
		}
	}
	return ""
}

func missing(field, where string) error {
	return &manifestError{code: codeMissingField,
		msg: fmt.Sprintf("Required property '%s' was not specified in object (%s)", field, where)}
}

// validate checks what the Director would refuse: missing keys and
// references to releases or stemcells the manifest does not declare.
func (m *manifestDoc) validate() error {
	releases := map[string]bool{}
	for i, r := range m.Releases {
		where := fmt.Sprintf("releases[%d]", i)
		if r.Name == "" {
			return missing("name", where)
		}
		if r.Version == "" {
			return missing("version", where)
		}
		releases[r.Name] = true
	}
	aliases := map[string]bool{}
	for i, s := range m.Stemcells {
		where := fmt.Sprintf("stemcells[%d]", i)
		switch {
		case s.Alias == "":
			return missing("alias", where)
		case s.OS == "" && s.Name == "":
			return missing("os", where)
		case s.Version == "":
			return missing("version", where)
		}
		aliases[s.Alias] = true
	}
	for i, g := range m.InstanceGroups {
		if err := g.validate(i, releases, aliases); err != nil {
			return err
		}
	}
	return nil
}

func (g *groupDoc) validate(i int, releases, aliases map[string]bool) error {
	where := fmt.Sprintf("instance_groups[%d]", i)
	switch {
	case g.Name == "":
		return missing("name", where)
	case g.Instances == nil:
		return missing("instances", where)
	case *g.Instances < 0:
		return &manifestError{code: codeValidationType,
			msg: fmt.Sprintf("Instance group '%s' has a negative number of instances", g.Name)}
	case *g.Instances > maxInstances:
		return &manifestError{code: codeValidationType,
			msg: fmt.Sprintf("Instance group '%s' has %d instances; the simulator serves at most %d", g.Name, *g.Instances, maxInstances)}
	case g.Stemcell != "" && !aliases[g.Stemcell]:
		return &manifestError{code: codeMissingField,
			msg: fmt.Sprintf("Stemcell '%s' referenced by instance group '%s' is not declared in 'stemcells'", g.Stemcell, g.Name)}
	}
	for j, job := range g.Jobs {
		jobWhere := fmt.Sprintf("%s.jobs[%d]", where, j)
		if job.Name == "" {
			return missing("name", jobWhere)
		}
		if job.Release == "" {
			return missing("release", jobWhere)
		}
		if !releases[job.Release] {
			return &manifestError{code: codeMissingField,
				msg: fmt.Sprintf("Job '%s' in instance group '%s' references an unknown release '%s'", job.Name, g.Name, job.Release)}
		}
	}
	return nil
}
