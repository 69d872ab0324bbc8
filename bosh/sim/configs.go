package sim

import (
	"net/http"
	"slices"
	"strconv"
	"time"
)

// config is a config (cloud, runtime, ...) the Director holds.
type config struct {
	id                 int
	typ, name, content string
	createdAt          time.Time
}

type configView struct {
	Content   string  `json:"content"`
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	Name      string  `json:"name"`
	Team      *string `json:"team"`
	CreatedAt string  `json:"created_at"`
	Current   bool    `json:"current"`
}

func newConfig(id int, typ, name, content string) config {
	return config{id: id, typ: typ, name: name, content: content, createdAt: time.Now().UTC()}
}

// SetCloudConfig uploads a new default cloud config: deployments deployed
// before it show cloud_config "outdated".
func (d *Director) SetCloudConfig(content string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.configs = append(d.configs, newConfig(d.configs[len(d.configs)-1].id+1, "cloud", "default", content))
	d.invalidateLocked()
}

// latestCloudConfigLocked is the id of the current cloud config; 0 = none.
func (d *Director) latestCloudConfigLocked() int {
	for i := len(d.configs) - 1; i >= 0; i-- {
		if d.configs[i].typ == "cloud" {
			return d.configs[i].id
		}
	}
	return 0
}

// listConfigs is GET /configs?latest=true|false&type=&name=, newest first.
func (d *Director) listConfigs(w http.ResponseWriter, r *http.Request, _ string) {
	q := r.URL.Query()
	if !q.Has("latest") {
		writeError(w, http.StatusBadRequest, codeMissingField, "'latest' is required")
		return
	}
	latestOnly := q.Get("latest") == "true"
	out := []configView{}
	seen := map[[2]string]bool{}
	d.mu.RLock()
	for _, c := range slices.Backward(d.configs) {
		key := [2]string{c.typ, c.name}
		current := !seen[key]
		seen[key] = true
		if (latestOnly && !current) || (q.Get("type") != "" && q.Get("type") != c.typ) || (q.Get("name") != "" && q.Get("name") != c.name) {
			continue
		}
		out = append(out, configView{Content: c.content, ID: strconv.Itoa(c.id), Type: c.typ, Name: c.name,
			CreatedAt: c.createdAt.Format("2006-01-02 15:04:05 UTC"), Current: current})
	}
	d.mu.RUnlock()
	writeJSON(w, http.StatusOK, out)
}
