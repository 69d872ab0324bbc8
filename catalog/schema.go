package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// Schemas are the JSON Schemas of a plan's parameters, as OSB's catalog
// advertises them (schemas.service_instance.create/update and
// schemas.service_binding.create). A nil schema is one the plan does not declare.
type Schemas struct {
	// InstanceCreate checks a provision's parameters.
	InstanceCreate *Schema
	// InstanceUpdate checks an update's parameters (as sent, before they
	// are merged over the instance's).
	InstanceUpdate *Schema
	// BindingCreate checks a bind's parameters.
	BindingCreate *Schema
}

// Schema is one compiled JSON Schema and the document it was compiled from.
type Schema struct {
	doc map[string]any
	v   *jsonschema.Schema
}

// Document is the schema as written in plan.yml (JSON values), for the OSB catalog.
func (s *Schema) Document() map[string]any { return s.doc }

// Operation names what a platform user's parameters are for.
type Operation string

// The operations that take parameters.
const (
	Provision Operation = "provision"
	Update    Operation = "update"
	Bind      Operation = "bind"
)

// ParameterError says why a request's parameters are refused: every
// problem found, each naming the parameter and the rule it breaks.
type ParameterError struct {
	// Problems are sentences such as "max_connections: must be <= 1000".
	Problems []string
}

func (e *ParameterError) Error() string {
	return "invalid parameters: " + strings.Join(e.Problems, "; ")
}

// maxProblems bounds how many problems a ParameterError lists, and
// maxProblemLen the length of one (a pattern's message quotes the value).
const maxProblems, maxProblemLen = 10, 200

// CheckParameters checks the parameters of op against the plan's schema
// for it. Without a schema a plan accepts no parameters, unless its
// accept_any_parameters is true. For an update, params are those sent; when
// the plan declares no update schema, merged (the instance's parameters
// with the update's merged over them) is checked against the create schema.
func (p Plan) CheckParameters(op Operation, params, merged map[string]any) error {
	s := p.schemaFor(op)
	if s == nil && op == Update && p.Schemas.InstanceCreate != nil {
		s, params = p.Schemas.InstanceCreate, merged
	}
	if s != nil {
		return s.validate(params)
	}
	if len(params) == 0 || p.AcceptAnyParameters {
		return nil
	}
	return &ParameterError{Problems: []string{fmt.Sprintf(
		"this plan takes no parameters on %s (got %s)", op, strings.Join(sortedKeys(params, maxProblems), ", "))}}
}

func (p Plan) schemaFor(op Operation) *Schema {
	switch op {
	case Provision:
		return p.Schemas.InstanceCreate
	case Update:
		return p.Schemas.InstanceUpdate
	case Bind:
		return p.Schemas.BindingCreate
	}
	return nil
}

// validate checks params (JSON values) against s.
func (s *Schema) validate(params map[string]any) error {
	if params == nil {
		params = map[string]any{}
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return &ParameterError{Problems: []string{"parameters are not JSON values"}}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &ParameterError{Problems: []string{"parameters are not JSON values"}}
	}
	err = s.v.Validate(v)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &ve) {
		return &ParameterError{Problems: []string{"parameters could not be checked"}}
	}
	return &ParameterError{Problems: problemsOf(ve.BasicOutput())}
}

// problemsOf turns the flat output of a validation into sentences naming
// the parameter (its JSON pointer without the leading slash).
func problemsOf(out *jsonschema.OutputUnit) []string {
	var list []string
	for _, u := range append([]jsonschema.OutputUnit{*out}, out.Errors...) {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		if strings.HasPrefix(msg, "validation failed") || msg == "" {
			continue
		}
		where := strings.TrimPrefix(u.InstanceLocation, "/")
		if where == "" {
			where = "parameters"
		}
		line := where + ": " + msg
		line = textcut.Marked(line, maxProblemLen, "...")
		if !slices.Contains(list, line) {
			list = append(list, line)
		}
		if len(list) == maxProblems {
			break
		}
	}
	if len(list) == 0 {
		list = []string{"parameters do not match the plan's schema"}
	}
	return list
}

func sortedKeys(m map[string]any, limit int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > limit {
		keys = append(keys[:limit], "...")
	}
	return keys
}

// noLoader refuses every reference out of a plan's schema: schemas must be
// self-contained, and compiling a catalog never reads a file or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas must be self-contained: %s is not loaded", url)
}

// schemaKeys are the paths under `schemas` a plan may declare.
var schemaKeys = map[string]map[string]bool{
	"service_instance": {"create": true, "update": true},
	"service_binding":  {"create": true},
}

// decodeSchemas reads plan.yml's `schemas` mapping (OSB's shape) into
// compiled schemas, reporting every problem through bad(field, message).
func decodeSchemas(n *yaml.Node, planID string, bad func(field, msg string)) Schemas {
	var out Schemas
	if n.Kind != yaml.MappingNode {
		bad("schemas", "expected a mapping (service_instance, service_binding)")
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kind, ops := n.Content[i].Value, n.Content[i+1]
		allowed, ok := schemaKeys[kind]
		if !ok {
			bad("schemas."+kind, "unknown field (service_instance or service_binding)")
			continue
		}
		if ops.Kind != yaml.MappingNode {
			bad("schemas."+kind, "expected a mapping")
			continue
		}
		for j := 0; j+1 < len(ops.Content); j += 2 {
			op, body := ops.Content[j].Value, ops.Content[j+1]
			field := "schemas." + kind + "." + op
			if !allowed[op] {
				bad(field, "unknown field")
				continue
			}
			s, err := compileSchema(body, planID, kind+"/"+op)
			if err != nil {
				bad(field, err.Error())
				continue
			}
			out.set(kind, op, s)
		}
	}
	return out
}

func (s *Schemas) set(kind, op string, sch *Schema) {
	switch kind + "." + op {
	case "service_instance.create":
		s.InstanceCreate = sch
	case "service_instance.update":
		s.InstanceUpdate = sch
	case "service_binding.create":
		s.BindingCreate = sch
	}
}

// compileSchema compiles {parameters: <JSON Schema>}. A schema without
// $schema is read as draft-04, the draft OSB names.
func compileSchema(n *yaml.Node, planID, where string) (*Schema, error) {
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 || n.Content[0].Value != "parameters" {
		return nil, errors.New("expected a mapping with the single field parameters")
	}
	var doc any
	if err := n.Content[1].Decode(&doc); err != nil {
		return nil, fmt.Errorf("parameters: %v", err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("parameters: not JSON values (mapping keys must be strings): %v", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("parameters: expected a JSON Schema object")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parameters: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	c.UseLoader(noLoader{})
	url := "https://blacksmith.invalid/plans/" + planID + "/" + where + ".json"
	if err := c.AddResource(url, v); err != nil {
		return nil, fmt.Errorf("parameters: %v", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("parameters: not a valid JSON Schema: %v", err)
	}
	return &Schema{doc: obj, v: sch}, nil
}
