package broker

import (
	"errors"
	"fmt"
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

// directors are the configured Directors, the first first.
func (b *Broker) directors() []NamedDirector { return b.opts.Directors }

// several says whether more than one Director is configured: only then do
// records name theirs.
func (b *Broker) several() bool { return len(b.opts.Directors) > 1 }

// directorNamed is the Director called name; "" is the first.
func (b *Broker) directorNamed(name string) (NamedDirector, error) {
	all := b.directors()
	if name == "" {
		return all[0], nil
	}
	for _, d := range all {
		if d.Name == name {
			return d, nil
		}
	}
	return NamedDirector{}, fmt.Errorf("%w %q (not in bosh)", ErrUnknownDirector, name)
}

// directorOf is the Director an instance's deployment lives on: the one its
// record names, else the first (a record written before there were several).
func (b *Broker) directorOf(rec *vault.Record) (NamedDirector, error) {
	if rec == nil {
		return b.directorNamed("")
	}
	return b.directorNamed(rec.Director)
}

// planDirector is the name a new instance's record gets: the plan's
// Director, else the first; "" with a single Director (records name none).
func (b *Broker) planDirector(plan catalog.Plan) string {
	if !b.several() {
		return ""
	}
	if plan.Director != "" {
		return plan.Director
	}
	return b.opts.Directors[0].Name
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
