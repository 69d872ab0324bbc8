package cf

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// Broker is a service broker as the Cloud Controller knows it.
type Broker struct {
	GUID, Name, URL string
	SpaceGUID       string // "" for a global broker
}

// ServiceBroker returns the broker registered under name; ErrNotFound when none is.
func (c *Client) ServiceBroker(ctx context.Context, name string) (Broker, error) {
	if name == "" || strings.Contains(name, ",") {
		return Broker{}, fmt.Errorf("cloud controller: broker name %q: empty or holding a comma", clean(name))
	}
	var found []Broker
	q := url.Values{"names": {name}}
	err := list(ctx, c, epBrokers, c.apiURL(epBrokers, q), func(p Page[brokerJSON, struct{}]) error {
		for _, b := range p.Resources {
			if b.Name == name {
				found = append(found, Broker{GUID: b.GUID, Name: b.Name, URL: b.URL, SpaceGUID: b.Relationships.Space.Data.GUID})
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return Broker{}, err
	case len(found) == 0:
		return Broker{}, fmt.Errorf("cloud controller: service broker %q: %w", clean(name), ErrNotFound)
	}
	return found[0], nil
}

type brokerJSON struct {
	GUID          string `json:"guid"`
	Name          string `json:"name"`
	URL           string `json:"url"`
	Relationships struct {
		Space relationship `json:"space"`
	} `json:"relationships"`
}

// relationship is {"data": {"guid": ...}}, data possibly null or absent.
type relationship struct {
	Data struct {
		GUID string `json:"guid"`
	} `json:"data"`
}
