package catalog

import (
	"os"
	"path/filepath"
	"strings"
)

// Load reads every service directory under each of dirs. With no dirs it
// returns an empty catalog. On any problem it returns nil and a *Problems
// listing every one, each naming the file and the field.
func Load(dirs ...string) (*Catalog, error) {
	l := &loader{
		problems:     &Problems{},
		serviceIDs:   map[string]string{},
		serviceNames: map[string]string{},
		planIDs:      map[string]string{},
	}
	c := &Catalog{}
	for _, dir := range dirs {
		c.Services = append(c.Services, l.dir(dir)...)
	}
	l.allOrNone(c)
	if len(l.problems.List) > 0 {
		return nil, l.problems
	}
	return c, nil
}

// loader remembers which file first used each id and name, to report repeats.
type loader struct {
	problems     *Problems
	serviceIDs   map[string]string // service id -> service.yml that has it
	serviceNames map[string]string
	planIDs      map[string]string // plan id -> plan.yml that has it
}

func (l *loader) dir(dir string) []Service {
	subdirs, err := subdirectories(dir)
	if err != nil {
		reportRead(dir, err, l.problems)
		return nil
	}
	var services []Service
	for _, sub := range subdirs {
		if s, ok := l.service(sub); ok {
			services = append(services, s)
		}
	}
	return services
}

// subdirectories lists the directories in dir (following symbolic links),
// skipping hidden ones, by name.
func subdirectories(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			out = append(out, path)
		}
	}
	return out, nil
}

// unique records value as used by file in seen, reporting an earlier use.
func (l *loader) unique(seen map[string]string, value, file, field, what string) {
	if value == "" {
		return
	}
	if other, dup := seen[value]; dup {
		l.problems.add(file, field, "%s %q is already used in %s", what, value, other)
		return
	}
	seen[value] = file
}
