package sim

import "net/http"

// api answers the simulated Cloud Controller's routes from the foundation:
// the root document and the v3 service lists, presented with the
// simulator's absolute links.
type api struct {
	f     *Foundation
	url   string // the simulator's, in the links it answers
	quota string // the guid of the one organization quota every org has

	hideMarketplace bool // Options.HideMarketplace, as its feature flag reads
}

// root is GET /: the links a client starts from.
type root struct {
	Links map[string]any `json:"links"`
}

func (a *api) getRoot(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, root{Links: map[string]any{
		"self":                href{a.url},
		"cloud_controller_v3": map[string]any{"href": a.url + "/v3", "meta": map[string]string{"version": APIVersion}},
		"login":               href{a.url + LoginPrefix},
		"uaa":                 href{a.url + UAAPrefix},
		"credhub":             nil,
		"routing":             nil,
	}})
}
