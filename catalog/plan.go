package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

func (l *loader) plan(dir, serviceID string, names map[string]string) (Plan, bool) {
	file := filepath.Join(dir, "plan.yml")
	p := Plan{ServiceID: serviceID, Source: file, Bindings: BindingsShared}
	before := len(l.problems.List)
	given, ok := decodeFile(file, map[string]setter{
		"id":                       str(&p.ID),
		"name":                     str(&p.Name),
		"description":              str(&p.Description),
		"limit":                    integer(&p.Limit),
		"max_bindings":             integer(&p.MaxBindings),
		"bindings":                 str(&p.Bindings),
		"updatable":                boolean(&p.Updatable),
		"maximum_polling_duration": integer(&p.MaximumPollingDuration),
		"polling_interval":         integer(&p.PollingInterval),
		"lifecycle_errands":        lifecycleErrands(&p.PostDeployErrands, &p.PreDeleteErrands),
		"accept_any_parameters":    boolean(&p.AcceptAnyParameters),
		"merge_parameters":         boolean(&p.MergeParameters),
		"director":                 str(&p.Director),
		"maintenance_info":         maintenanceInfo(&p.MaintenanceInfo),
		"schemas": func(n *yaml.Node) string {
			p.Schemas = decodeSchemas(n, p.ID, func(field, msg string) { l.problems.add(file, field, "%s", msg) })
			return ""
		},
	}, l.problems)
	if ok {
		l.common(file, given, p.ID, p.Name, p.Description, p.Limit)
		if p.Bindings != BindingsShared && p.Bindings != BindingsPerBinding {
			l.problems.add(file, "bindings", "must be %s or %s, got %q", BindingsShared, BindingsPerBinding, p.Bindings)
		}
		l.polling(file, given, p)
		if p.MaxBindings < 0 {
			l.problems.add(file, "max_bindings", "must not be negative (0 = unlimited), got %d", p.MaxBindings)
		}
		l.unique(l.planIDs, p.ID, file, "id", "plan id")
		l.unique(names, p.Name, file, "name", "plan name")
	}
	p.Manifest = l.template(filepath.Join(dir, "manifest.yml"), true)
	p.Credentials = l.template(filepath.Join(dir, "credentials.yml"), false)
	l.tryRender(dir, p)
	return p, ok && len(l.problems.List) == before
}

// polling checks a plan's polling fields: maximum_polling_duration 0 (the
// platform's own) or a minute to a week, polling_interval (when given) 1
// to an hour and less than maximum_polling_duration.
func (l *loader) polling(file string, given map[string]bool, p Plan) {
	if d := p.MaximumPollingDuration; d != 0 && (d < MinPollingDuration || d > MaxPollingDuration) {
		l.problems.add(file, "maximum_polling_duration", "must be 0 (the platform's own) or %d to %d seconds (a minute to a week), got %d",
			MinPollingDuration, MaxPollingDuration, d)
	}
	if !given["polling_interval"] {
		return
	}
	switch i := p.PollingInterval; {
	case i < 1 || i > MaxPollingInterval:
		l.problems.add(file, "polling_interval", "must be 1 to %d seconds, got %d", MaxPollingInterval, i)
	case p.MaximumPollingDuration > 0 && i >= p.MaximumPollingDuration:
		l.problems.add(file, "polling_interval", "must be less than maximum_polling_duration (%d), got %d", p.MaximumPollingDuration, i)
	}
}

// template reads and parses a template file. A missing optional file is
// nil with no problem.
func (l *loader) template(path string, required bool) *Template {
	data, err := os.ReadFile(path)
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		reportRead(path, err, l.problems)
		return nil
	}
	text := string(data)
	if strings.TrimSpace(text) == "" {
		l.problems.add(path, "", "is empty")
		return nil
	}
	t, err := ParseTemplate(filepath.Base(path), text)
	if err != nil {
		l.problems.List = append(l.problems.List, Problem{File: path, Message: "not a valid template: " + err.Error(), Err: err})
		return nil
	}
	return t
}

// tryRender renders the plan's templates with sample data (no parameters)
// so that a template that cannot give a YAML mapping is found when the
// catalog loads, not by the first platform user.
func (l *loader) tryRender(dir string, p Plan) {
	data := SampleData(p)
	if p.Manifest != nil {
		if _, err := p.Manifest.RenderMapping(data.ManifestData); err != nil {
			l.problems.add(filepath.Join(dir, "manifest.yml"), "", "does not render with sample data: %v", err)
		}
	}
	if p.Credentials != nil {
		if _, err := p.Credentials.RenderMapping(data); err != nil {
			l.problems.add(filepath.Join(dir, "credentials.yml"), "", "does not render with sample data: %v", err)
		}
	}
}

// SampleData is what the catalog renders a plan's templates with when it
// loads: no parameters, sample secrets, three VM addresses.
//
// A per_binding plan's sample instance has two bindings, each with its own
// sample secrets; its sample binding is the second.
func SampleData(p Plan) CredentialsData {
	const id = "00000000-0000-4000-8000-000000000000"
	binding := Binding{ID: id, Secrets: map[string]any{}}
	bindings := []Binding{}
	if p.PerBinding() {
		bindings = []Binding{
			{ID: "00000000-0000-4000-8000-000000000001", Secrets: map[string]any{"username": "usample1", "password": "sample1"}},
			{ID: "00000000-0000-4000-8000-000000000002", Secrets: map[string]any{"username": "usample2", "password": "sample2"}},
		}
		binding = bindings[1]
	}
	return CredentialsData{
		ManifestData: ManifestData{
			DeploymentName: fmt.Sprintf("%s-%s", p.ID, id), InstanceID: id, ServiceID: p.ServiceID, PlanID: p.ID,
			OrganizationGUID: id, SpaceGUID: id, Params: map[string]any{},
			Secrets: map[string]any{"username": "usample", "password": "sample"}, Bindings: bindings,
		},
		BindParams: map[string]any{}, IPs: []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}, Host: "127.0.0.1",
		BindingID: binding.ID, AppGUID: id, Binding: binding,
	}
}
