package sim

import "net/http"

// directorVersion is the Director version the simulator claims to be.
const directorVersion = "282.0.3 (00000000)"

type info struct {
	Name               string   `json:"name"`
	UUID               string   `json:"uuid"`
	Version            string   `json:"version"`
	User               *string  `json:"user"`
	CPI                string   `json:"cpi"`
	StemcellOS         string   `json:"stemcell_os"`
	StemcellVersion    string   `json:"stemcell_version"`
	UserAuthentication userAuth `json:"user_authentication"`
	Features           any      `json:"features"`
}

type userAuth struct {
	Type    string         `json:"type"`
	Options map[string]any `json:"options"`
}

// features are the Director features /info reports; addresses are under
// .invalid so that nothing can reach them.
var features = map[string]any{
	"local_dns":     map[string]any{"status": true, "extras": map[string]any{"domain_name": "bosh"}},
	"snapshots":     map[string]any{"status": false},
	"config_server": map[string]any{"status": true, "extras": map[string]any{"urls": []string{"https://config-server.bosh.invalid:8844/api/"}}},
}

// getInfo is GET /info: unauthenticated; user is set when the request
// carries valid credentials.
func (g *gate) getInfo(w http.ResponseWriter, r *http.Request, _ string) {
	in := info{Name: g.opts.Name, UUID: g.opts.UUID, Version: directorVersion, CPI: "vsphere_cpi",
		StemcellOS: "ubuntu-jammy", StemcellVersion: infoStemcellVersion,
		UserAuthentication: userAuth{Type: g.opts.Auth, Options: map[string]any{}}, Features: features}
	if id, ok := g.identify(r); ok {
		in.User = &id.user
	}
	if g.opts.Auth == AuthUAA {
		u := or(g.opts.UAAURL, g.url)
		in.UserAuthentication.Options = map[string]any{"url": u, "urls": []string{u}}
	}
	writeJSON(w, http.StatusOK, in)
}
