package cf

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

// ServiceInstance returns one instance by guid; ErrNotFound when it is gone.
// Its space and organization names are not read.
func (c *Client) ServiceInstance(ctx context.Context, guid string) (Instance, error) {
	if guid == "" || guid == "." || guid == ".." {
		return Instance{}, fmt.Errorf("cloud controller: instance guid %q is not a guid", clean(guid))
	}
	u := c.apiURL("/v3/service_instances/"+guid, nil)
	u.RawPath = "/v3/service_instances/" + url.PathEscape(guid)
	res, err := c.get(ctx, epInstance, u)
	if err != nil {
		return Instance{}, err
	}
	var r instanceJSON
	if err := decode(epInstance, res.body, &r); err != nil {
		return Instance{}, err
	}
	if r.GUID != guid {
		return Instance{}, &unavailable{fmt.Errorf("cloud controller: GET %s: asked for %q, answered %q", epInstance, clean(guid), clean(r.GUID))}
	}
	return r.instance(), nil
}

type instanceJSON struct {
	GUID          string `json:"guid"`
	Name          string `json:"name"`
	LastOperation struct {
		Type        string    `json:"type"`
		State       string    `json:"state"`
		Description string    `json:"description"`
		UpdatedAt   time.Time `json:"updated_at"`
	} `json:"last_operation"`
	Relationships struct {
		Space       relationship `json:"space"`
		ServicePlan relationship `json:"service_plan"`
	} `json:"relationships"`
}

func (r instanceJSON) instance() Instance {
	op := r.LastOperation
	return Instance{GUID: r.GUID, Name: r.Name, PlanGUID: r.Relationships.ServicePlan.Data.GUID,
		SpaceGUID:     r.Relationships.Space.Data.GUID,
		LastOperation: LastOperation{Type: op.Type, State: op.State, Description: clean(op.Description), UpdatedAt: op.UpdatedAt}}
}
