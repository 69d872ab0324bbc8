package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// NamedDirector is one BOSH Director: its name (bosh.name) and its clients.
type NamedDirector struct {
	Name     string
	Director Director
	Reader   DirectorReader
}

// ErrUnknownDirector means a record or a plan names a Director that is not configured.
var ErrUnknownDirector = errors.New("unknown BOSH Director")

// directors are the configured Directors (the first first) and the way
// they are called: each call asked again after transient faults (ask), a
// task created once (createTask).
type directors struct {
	all     []NamedDirector
	retries int // Options.DirectorRetries, defaults filled in
	log     *slog.Logger
}

// several says whether more than one Director is configured: only then do
// records name theirs.
func (ds *directors) several() bool { return len(ds.all) > 1 }

// named is the Director called name; "" is the first.
func (ds *directors) named(name string) (NamedDirector, error) {
	if name == "" {
		return ds.all[0], nil
	}
	for _, dir := range ds.all {
		if dir.Name == name {
			return dir, nil
		}
	}
	return NamedDirector{}, fmt.Errorf("%w %q (not in bosh)", ErrUnknownDirector, name)
}

// of is the Director an instance's deployment lives on: the one its
// record names, else the first (a record written before there were several).
func (ds *directors) of(rec *vault.Record) (NamedDirector, error) {
	if rec == nil {
		return ds.named("")
	}
	return ds.named(rec.Director)
}

// forPlan is the name a new instance's record gets: the plan's
// Director, else the first; "" with a single Director (records name none).
func (ds *directors) forPlan(plan catalog.Plan) string {
	if !ds.several() {
		return ""
	}
	if plan.Director != "" {
		return plan.Director
	}
	return ds.all[0].Name
}

// checkDirectors says which plans name a Director that is not configured.
func checkDirectors(o Options) error {
	known := map[string]bool{}
	var names []string
	for _, d := range o.Directors {
		if d.Name == "" || d.Director == nil || d.Reader == nil || known[d.Name] {
			return fmt.Errorf("director %q: every Director needs its own name and both clients", d.Name)
		}
		known[d.Name] = true
		names = append(names, d.Name)
	}
	if o.Catalog == nil {
		return nil
	}
	return CheckPlanDirectors(o.Catalog, names)
}

// CheckPlanDirectors says which plans of cat name a Director (director: of
// plan.yml) that is not among names (ErrUnknownDirector).
func CheckPlanDirectors(cat *catalog.Catalog, names []string) error {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	var errs []error
	for _, s := range cat.Services {
		for _, p := range s.Plans {
			if p.Director != "" && !slices.Contains(names, p.Director) {
				errs = append(errs, fmt.Errorf("plan %s: director: %w %q (configured: %s)", p.ID, ErrUnknownDirector, p.Director,
					strings.Join(quoted, ", ")))
			}
		}
	}
	return errors.Join(errs...)
}
