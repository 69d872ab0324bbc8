package catalog

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaintenanceInfo is the version of what a plan deploys, as the OSB API's
// maintenance_info advertises it (2.15 on): a platform that sends another
// version on a provision or update is refused (422 MaintenanceInfoConflict),
// and an update to a newer one deploys the plan's current templates again.
type MaintenanceInfo struct {
	// Version is a semantic version (semver.org 2.0), e.g. "1.2.0". Required.
	Version string
	// Description says what the version brings, for the platform's users.
	// Default none.
	Description string
}

// semver is the grammar of semver.org 2.0: MAJOR.MINOR.PATCH, an optional
// pre-release and build metadata, numbers without leading zeros.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?` +
	`(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// maxVersionLength and maxMaintenanceDetail bound the version and the description.
const (
	maxVersionLength     = 64
	maxMaintenanceDetail = 1000
)

// maintenanceInfo decodes plan.yml's maintenance_info: a mapping of version
// (required, semver) and description.
func maintenanceInfo(dst **MaintenanceInfo) setter {
	return func(n *yaml.Node) string {
		if n.Kind != yaml.MappingNode {
			return "expected a mapping of version and description"
		}
		mi := &MaintenanceInfo{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			v, msg := scalar(val)
			switch {
			case key != "version" && key != "description":
				return fmt.Sprintf("unknown field %q (version and description are known)", key)
			case msg != "":
				return key + ": " + msg
			case key == "version":
				mi.Version = v
			default:
				mi.Description = v
			}
		}
		switch {
		case mi.Version == "":
			return "version is required (a semantic version, e.g. 1.0.0)"
		case len(mi.Version) > maxVersionLength || !semver.MatchString(mi.Version):
			return fmt.Sprintf("version %q is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.2.0; semver.org)", mi.Version)
		case len(mi.Description) > maxMaintenanceDetail:
			return fmt.Sprintf("description is %d characters; at most %d", len(mi.Description), maxMaintenanceDetail)
		}
		*dst = mi
		return ""
	}
}

// allOrNone requires maintenance_info of every plan once one declares it: a
// plan without would take whatever version a platform sends.
func (l *loader) allOrNone(c *Catalog) {
	var first string
	for _, s := range c.Services {
		for _, p := range s.Plans {
			if p.MaintenanceInfo != nil && first == "" {
				first = p.ID
			}
		}
	}
	if first == "" {
		return
	}
	for _, s := range c.Services {
		for _, p := range s.Plans {
			if p.MaintenanceInfo == nil {
				l.problems.add(l.planIDs[p.ID], "maintenance_info", "required once any plan declares one (plan %q does)", first)
			}
		}
	}
}

// CompareVersions orders two semantic versions by semver.org precedence:
// MAJOR, MINOR and PATCH numerically, a pre-release before its release,
// pre-release identifiers one by one (numbers numerically and before
// words), build metadata ignored. A version that is not semantic orders
// before every one that is (and two such by their text): an instance whose
// recorded version cannot be read is behind.
func CompareVersions(a, b string) int {
	va, oka := semverParts(a)
	vb, okb := semverParts(b)
	switch {
	case !oka || !okb:
		return cmp.Or(cmp.Compare(btoi(oka), btoi(okb)), strings.Compare(a, b))
	}
	for i := range 3 {
		if c := compareNumeric(va.core[i], vb.core[i]); c != 0 {
			return c
		}
	}
	switch {
	case va.pre == nil && vb.pre == nil:
		return 0
	case va.pre == nil:
		return 1
	case vb.pre == nil:
		return -1
	}
	for i := range min(len(va.pre), len(vb.pre)) {
		x, y := va.pre[i], vb.pre[i]
		nx, ny := isNumeric(x), isNumeric(y)
		var c int
		switch {
		case nx && ny:
			c = compareNumeric(x, y)
		case nx != ny:
			c = cmp.Compare(btoi(!nx), btoi(!ny)) // numbers before words
		default:
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(va.pre), len(vb.pre))
}

type semverVersion struct {
	core [3]string
	pre  []string
}

func semverParts(v string) (semverVersion, bool) {
	if len(v) > maxVersionLength || !semver.MatchString(v) {
		return semverVersion{}, false
	}
	v, _, _ = strings.Cut(v, "+")
	core, pre, hasPre := strings.Cut(v, "-")
	parts := strings.SplitN(core, ".", 3)
	out := semverVersion{core: [3]string{parts[0], parts[1], parts[2]}}
	if hasPre {
		out.pre = strings.Split(pre, ".")
	}
	return out, true
}

func isNumeric(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// compareNumeric compares two digit strings without leading zeros (the
// grammar forbids them) of any length.
func compareNumeric(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// maxNamedInstances bounds the instances a version problem names.
const maxNamedInstances = 3

// VersionProblems are the plans of c whose maintenance_info version is
// lower than one an instance records (a plan's version never goes down: an
// older catalog deployed by mistake would make those instances look current
// and a later upgrade go back), each naming the plan's file, the highest
// version recorded and the first instances recording it. recorded calls
// yield for each instance's id, plan and recorded version.
func VersionProblems(c *Catalog, recorded func(yield func(id, planID, version string) bool)) []Problem {
	type high struct {
		version string
		ids     []string
		n       int
	}
	highest := map[string]*high{}
	recorded(func(id, planID, version string) bool {
		_, plan, ok := c.Plan(planID)
		if !ok || plan.MaintenanceInfo == nil || version == "" || CompareVersions(version, plan.MaintenanceInfo.Version) <= 0 {
			return true
		}
		h := highest[planID]
		if h == nil {
			h = &high{}
			highest[planID] = h
		}
		h.n++
		switch d := CompareVersions(version, h.version); {
		case d > 0:
			h.version, h.ids = version, []string{id}
		case d == 0 && len(h.ids) < maxNamedInstances:
			h.ids = append(h.ids, id)
		}
		return true
	})
	var out []Problem
	for _, s := range c.Services {
		for _, p := range s.Plans {
			h := highest[p.ID]
			if h == nil {
				continue
			}
			file := cmp.Or(p.Source, "plan "+p.ID)
			out = append(out, Problem{File: file, Field: "maintenance_info.version", Message: fmt.Sprintf(
				"%s is lower than %s, which instance(s) %s record (%d instance(s) record a higher version): a plan's version never goes down",
				p.MaintenanceInfo.Version, h.version, strings.Join(h.ids, ", "), h.n)})
		}
	}
	return out
}
