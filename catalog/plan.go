package catalog

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template/parse"
)

func (l *loader) plan(dir, serviceID string, names map[string]string) (Plan, bool) {
	file := filepath.Join(dir, "plan.yml")
	p := Plan{ServiceID: serviceID}
	given, ok := decodeFile(file, map[string]setter{
		"id":          str(&p.ID),
		"name":        str(&p.Name),
		"description": str(&p.Description),
		"limit":       integer(&p.Limit),
		"updatable":   boolean(&p.Updatable),
	}, l.problems)
	if ok {
		l.common(file, given, p.ID, p.Name, p.Description, p.Limit)
		l.unique(l.planIDs, p.ID, file, "id", "plan id")
		l.unique(names, p.Name, file, "name", "plan name")
	}
	manifest, mok := l.template(filepath.Join(dir, "manifest.yml"), true)
	creds, cok := l.template(filepath.Join(dir, "credentials.yml"), false)
	p.Manifest, p.Credentials = manifest, creds
	return p, ok && mok && cok
}

// template reads a template file and checks that it parses as a Go
// text/template. Function names are not checked: the broker's renderer
// decides which functions exist. A missing optional file is "", true.
func (l *loader) template(path string, required bool) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return "", true
		}
		reportRead(path, err, l.problems)
		return "", false
	}
	text := string(data)
	if strings.TrimSpace(text) == "" {
		l.problems.add(path, "", "is empty")
		return "", false
	}
	t := parse.New(filepath.Base(path))
	t.Mode = parse.SkipFuncCheck
	if _, err := t.Parse(text, "", "", map[string]*parse.Tree{}); err != nil {
		l.problems.List = append(l.problems.List, Problem{File: path, Message: "not a valid template: " + err.Error(), Err: err})
		return "", false
	}
	return text, true
}
