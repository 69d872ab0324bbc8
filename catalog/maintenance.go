package catalog

import (
	"fmt"
	"regexp"

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
