package sim

import (
	"encoding/json"
	"net/http"
	"time"
)

// keyJSON is a credential binding as ServiceCredentialBindingPresenter writes one.
type keyJSON struct {
	GUID          string          `json:"guid"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
	Name          string          `json:"name"`
	Type          string          `json:"type"`
	LastOperation lastOpJSON      `json:"last_operation"`
	Metadata      metadata        `json:"metadata"`
	Relationships map[string]any  `json:"relationships"`
	Links         map[string]href `json:"links"`
}

func presentKey(url string, k Key) keyJSON {
	self := url + "/v3/service_credential_bindings/" + k.GUID
	out := keyJSON{GUID: k.GUID, CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt, Name: k.Name, Type: "key",
		LastOperation: presentLastOp(k.LastOperation), Metadata: emptyMetadata(),
		Relationships: map[string]any{"service_instance": map[string]any{"data": map[string]string{"guid": k.InstanceGUID}}},
		Links: map[string]href{"self": {self}, "details": {self + "/details"}, "parameters": {self + "/parameters"},
			"service_instance": {url + "/v3/service_instances/" + k.InstanceGUID}}}
	if k.AppGUID != "" { // type app: the app's relationship and link
		out.Type = "app"
		out.Relationships["app"] = map[string]any{"data": map[string]string{"guid": k.AppGUID}}
		out.Links["app"] = href{url + "/v3/apps/" + k.AppGUID}
	}
	return out
}

// get is GET /v3/service_credential_bindings/:guid.
func (kw *keyWrites) get(w http.ResponseWriter, r *http.Request) {
	k, ok := getKey(kw.f, r.PathValue("guid"))
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service credential binding"))
		return
	}
	writeJSON(w, http.StatusOK, presentKey(kw.api.url, k))
}

// detailsJSON is ServiceCredentialBindingDetailsPresenter: nil members are compacted away.
type detailsJSON struct {
	Credentials    json.RawMessage `json:"credentials"`
	SyslogDrainURL *string         `json:"syslog_drain_url,omitempty"`
	VolumeMounts   json.RawMessage `json:"volume_mounts,omitempty"`
}

// details is GET /v3/service_credential_bindings/:guid/details: a key not
// created (yet) is 404 "Creation of service key <state>", as CC words it.
func (kw *keyWrites) details(w http.ResponseWriter, r *http.Request) {
	k, ok := getKey(kw.f, r.PathValue("guid"))
	switch {
	case !ok:
		writeError(w, http.StatusNotFound, resourceNotFound("Service credential binding"))
	case k.LastOperation.Type != OpCreate || k.LastOperation.State != StateSucceeded:
		op, kind := "Deletion", "key"
		if k.LastOperation.Type == OpCreate {
			op = "Creation"
		}
		if k.AppGUID != "" {
			kind = "binding"
		}
		writeError(w, http.StatusNotFound, cfError{10010, "CF-ResourceNotFound", op + " of service " + kind + " " + k.LastOperation.State})
	default:
		creds := k.Credentials
		if creds == nil {
			creds = json.RawMessage("{}")
		}
		writeJSON(w, http.StatusOK, detailsJSON{Credentials: creds, SyslogDrainURL: k.SyslogDrainURL, VolumeMounts: k.VolumeMounts})
	}
}
