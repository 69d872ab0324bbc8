package cf

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Plan is a service plan of a broker.
type Plan struct {
	GUID, Name string
	// CatalogID is broker_catalog.id: the plan's id in the broker's catalog.
	CatalogID          string
	OfferingGUID       string
	MaintenanceVersion string // maintenance_info.version, "" when none
}

// ServicePlans returns every plan of the broker named brokerName (none when
// the broker is not registered).
func (c *Client) ServicePlans(ctx context.Context, brokerName string) ([]Plan, error) {
	if brokerName == "" || strings.Contains(brokerName, ",") {
		return nil, fmt.Errorf("cloud controller: broker name %q: empty or holding a comma", clean(brokerName))
	}
	q := url.Values{"service_broker_names": {brokerName}, "per_page": {strconv.Itoa(c.opts.PerPage)}}
	var plans []Plan
	err := list(ctx, c, epPlans, c.apiURL(epPlans, q), func(p Page[planJSON, struct{}]) error {
		for _, r := range p.Resources {
			plans = append(plans, Plan{GUID: r.GUID, Name: r.Name, CatalogID: r.BrokerCatalog.ID,
				OfferingGUID:       r.Relationships.ServiceOffering.Data.GUID,
				MaintenanceVersion: r.MaintenanceInfo.Version})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return plans, nil
}

type planJSON struct {
	GUID          string `json:"guid"`
	Name          string `json:"name"`
	BrokerCatalog struct {
		ID string `json:"id"`
	} `json:"broker_catalog"`
	MaintenanceInfo struct {
		Version string `json:"version"`
	} `json:"maintenance_info"`
	Relationships struct {
		ServiceOffering relationship `json:"service_offering"`
	} `json:"relationships"`
}
