package cf

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// BrokerSpec is what a broker is registered with: its name, the URL the
// Cloud Controller reaches it at and its basic-auth credentials.
type BrokerSpec struct {
	Name, URL          string
	Username, Password string
}

// brokerBody is the JSON of a broker's create or update; the password is
// only ever in the request body, never in an error or a log.
func (s BrokerSpec) body() ([]byte, error) {
	if s.Name == "" || s.URL == "" || s.Username == "" || s.Password == "" {
		return nil, fmt.Errorf("cloud controller: a broker needs a name, a url, a username and a password")
	}
	type creds struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	type auth struct {
		Type        string `json:"type"`
		Credentials creds  `json:"credentials"`
	}
	return json.Marshal(struct {
		Name           string `json:"name"`
		URL            string `json:"url"`
		Authentication auth   `json:"authentication"`
	}{s.Name, s.URL, auth{"basic", creds{s.Username, s.Password}}})
}

// CreateServiceBroker registers a global broker (POST
// /v3/service_brokers) and waits for the job that fetches its catalog: a
// *JobError when the Cloud Controller could not fetch it.
func (a *Admin) CreateServiceBroker(ctx context.Context, s BrokerSpec) error {
	body, err := s.body()
	if err != nil {
		return err
	}
	res, err := a.c.do(ctx, http.MethodPost, epBrokers, a.c.apiURL(epBrokers, nil), body)
	if err != nil {
		return err
	}
	return a.accepted(ctx, http.MethodPost, epBrokers, res)
}

// UpdateServiceBroker sets the broker's name, URL and credentials (PATCH
// /v3/service_brokers/:guid) and waits for the job that fetches its
// catalog again.
func (a *Admin) UpdateServiceBroker(ctx context.Context, guid string, s BrokerSpec) error {
	body, err := s.body()
	if err != nil {
		return err
	}
	u, err := a.c.guidURL("/v3/service_brokers/", guid)
	if err != nil {
		return err
	}
	res, err := a.c.do(ctx, http.MethodPatch, epBroker, u, body)
	if err != nil {
		return err
	}
	return a.accepted(ctx, http.MethodPatch, epBroker, res)
}

// DeleteServiceBroker deregisters the broker (DELETE
// /v3/service_brokers/:guid) and waits for its job. The Cloud Controller
// refuses while instances of its plans exist: an *APIError with
// CodeBrokerNotRemovable.
func (a *Admin) DeleteServiceBroker(ctx context.Context, guid string) error {
	u, err := a.c.guidURL("/v3/service_brokers/", guid)
	if err != nil {
		return err
	}
	res, err := a.c.do(ctx, http.MethodDelete, epBroker, u, nil)
	if err != nil {
		return err
	}
	return a.accepted(ctx, http.MethodDelete, epBroker, res)
}

// guidURL is prefix + guid on the API, the guid escaped as one path segment.
func (c *Client) guidURL(prefix, guid string) (*url.URL, error) {
	if guid == "" || guid == "." || guid == ".." || len(guid) > 255 {
		return nil, fmt.Errorf("cloud controller: %q is not a guid", clean(guid))
	}
	u := c.apiURL(prefix+guid, nil)
	u.RawPath = prefix + url.PathEscape(guid)
	return u, nil
}
