package catalog

import (
	"path/filepath"
	"regexp"
	"strings"
)

// validID is what a service or plan id may look like: plan ids become the
// start of BOSH deployment names.
var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func (l *loader) service(dir string) (Service, bool) {
	file := filepath.Join(dir, "service.yml")
	s := Service{Bindable: true}
	given, ok := decodeFile(file, map[string]setter{
		"id":          str(&s.ID),
		"name":        str(&s.Name),
		"description": str(&s.Description),
		"bindable":    boolean(&s.Bindable),
		"tags":        stringList(&s.Tags),
		"limit":       integer(&s.Limit),
		"shareable":   boolean(&s.Shareable),
	}, l.problems)
	if !ok {
		return Service{}, false
	}
	l.common(file, given, s.ID, s.Name, s.Description, s.Limit)
	l.unique(l.serviceIDs, s.ID, file, "id", "service id")
	l.unique(l.serviceNames, s.Name, file, "name", "service name")
	planDirs, err := subdirectories(dir)
	if err != nil {
		reportRead(dir, err, l.problems)
		return Service{}, false
	}
	if len(planDirs) == 0 {
		l.problems.add(dir, "", "has no plan directories")
	}
	planNames := map[string]string{}
	for _, pd := range planDirs {
		if p, ok := l.plan(pd, s.ID, planNames); ok {
			s.Plans = append(s.Plans, p)
		}
	}
	return s, true
}

// common checks the fields services and plans share.
func (l *loader) common(file string, given map[string]bool, id, name, description string, limit int) {
	for _, f := range [...]struct{ field, value string }{{"id", id}, {"name", name}, {"description", description}} {
		good, present := given[f.field]
		if !present {
			l.problems.add(file, f.field, "required")
		} else if good && f.value == "" {
			l.problems.add(file, f.field, "must not be empty")
		}
	}
	if id != "" && !validID.MatchString(id) {
		l.problems.add(file, "id", "%q: use letters, digits, '-', '_' and '.' only", id)
	}
	if strings.ContainsFunc(name, isSpace) {
		l.problems.add(file, "name", "%q: must not contain whitespace", name)
	}
	if limit < 0 {
		l.problems.add(file, "limit", "must not be negative (0 = unlimited), got %d", limit)
	}
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
