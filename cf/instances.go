package cf

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Instance is a managed service instance as the Cloud Controller knows it;
// its GUID is the OSB instance_id the broker was sent.
type Instance struct {
	GUID, Name, PlanGUID string
	SpaceGUID, SpaceName string // SpaceName, OrgGUID, OrgName: "" from ServiceInstance
	OrgGUID, OrgName     string
	LastOperation        LastOperation
}

// LastOperation is an instance's last operation; zero when it has none.
type LastOperation struct {
	Type        string // create, update, delete
	State       string // initial, in progress, succeeded, failed
	Description string
	UpdatedAt   time.Time
}

// ServiceInstances returns every managed instance of the plans, all pages
// read; an error means the list is unknown, never that it is partial.
func (c *Client) ServiceInstances(ctx context.Context, planGUIDs []string) ([]Instance, error) {
	if len(planGUIDs) == 0 {
		return nil, nil
	}
	for _, g := range planGUIDs {
		if g == "" || strings.Contains(g, ",") {
			return nil, fmt.Errorf("cloud controller: plan guid %q: empty or holding a comma", clean(g))
		}
	}
	q := url.Values{"service_plan_guids": {strings.Join(planGUIDs, ",")}, "type": {"managed"},
		"per_page": {strconv.Itoa(c.opts.PerPage)}, "fields[space]": {"name,guid,relationships.organization"},
		"fields[space.organization]": {"name,guid"}}
	var out []Instance
	err := list(ctx, c, epInstances, c.apiURL(epInstances, q), func(p Page[instanceJSON, includedJSON]) error {
		spaces, orgs := p.Included.index()
		for _, r := range p.Resources {
			in := r.instance()
			sp := spaces[in.SpaceGUID]
			in.SpaceName, in.OrgGUID = sp.Name, sp.Relationships.Organization.Data.GUID
			in.OrgName = orgs[in.OrgGUID]
			out = append(out, in)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type includedJSON struct {
	Spaces        []spaceJSON `json:"spaces"`
	Organizations []struct {
		GUID string `json:"guid"`
		Name string `json:"name"`
	} `json:"organizations"`
}

type spaceJSON struct {
	GUID          string `json:"guid"`
	Name          string `json:"name"`
	Relationships struct {
		Organization relationship `json:"organization"`
	} `json:"relationships"`
}

func (inc includedJSON) index() (map[string]spaceJSON, map[string]string) {
	spaces, orgs := make(map[string]spaceJSON, len(inc.Spaces)), make(map[string]string, len(inc.Organizations))
	for _, s := range inc.Spaces {
		spaces[s.GUID] = s
	}
	for _, o := range inc.Organizations {
		orgs[o.GUID] = o.Name
	}
	return spaces, orgs
}
