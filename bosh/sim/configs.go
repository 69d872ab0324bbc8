package sim

import (
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
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

// typedConfigView is a config as GET /cloud_configs (and runtime, cpi) show
// it: no id, no name.
type typedConfigView struct {
	Properties string `json:"properties"`
	CreatedAt  string `json:"created_at"`
}

// configKind is a config type with a controller of its own:
// /cloud_configs, /runtime_configs, /cpi_configs.
type configKind struct {
	typ        string // its type in /configs
	objectType string // the object_type of its events
	named      bool   // reads ?name= ("" or absent: default); a cpi config is always default
	redacts    bool   // its diff redacts properties unless ?redact=false
}

var (
	cloudConfigKind   = configKind{typ: "cloud", objectType: "cloud-config", named: true}
	runtimeConfigKind = configKind{typ: "runtime", objectType: "runtime-config", named: true, redacts: true}
	cpiConfigKind     = configKind{typ: "cpi", objectType: "cpi-config", redacts: true}
)

func (k configKind) nameOf(r *http.Request) string {
	if name, _ := lastValue(r.URL.Query(), "name"); k.named && name != "" {
		return name
	}
	return "default"
}

func newConfig(id int, typ, name, content string) config {
	return config{id: id, typ: typ, name: name, content: content, createdAt: time.Now().UTC()}
}

func (c config) createdAtText() string { return c.createdAt.Format("2006-01-02 15:04:05 UTC") }

func (c config) view(current bool) configView {
	return configView{Content: c.content, ID: strconv.Itoa(c.id), Type: c.typ, Name: c.name,
		CreatedAt: c.createdAtText(), Current: current}
}

// configBook holds the Director's configs (cloud, runtime, cpi): the
// /configs and typed config routes, the deploy's check against the cloud
// config, and the diffs made against them.
type configBook struct {
	db   *store
	rec  *recorder
	gate *gate // who may read the cpi configs
}

// setCloud uploads a new default cloud config (Director.SetCloudConfig).
func (cb *configBook) setCloud(content string) {
	cb.db.mu.Lock()
	defer cb.db.mu.Unlock()
	cb.addLocked("cloud", "default", content)
}

// addLocked stores a new config of a type and name.
func (cb *configBook) addLocked(typ, name, content string) {
	cb.db.configs = append(cb.db.configs, newConfig(cb.db.configs[len(cb.db.configs)-1].id+1, typ, name, content))
	cb.db.invalidateLocked()
}

// latestCloudLocked is the id of the current cloud config; 0 = none.
func (cb *configBook) latestCloudLocked() int {
	for i := len(cb.db.configs) - 1; i >= 0; i-- {
		if cb.db.configs[i].typ == "cloud" {
			return cb.db.configs[i].id
		}
	}
	return 0
}

// latestLocked is the current config of a type and name, nil when none.
func (cb *configBook) latestLocked(typ, name string) *config {
	for i := len(cb.db.configs) - 1; i >= 0; i-- {
		if c := &cb.db.configs[i]; c.typ == typ && c.name == name {
			return c
		}
	}
	return nil
}

// listConfigs is GET /configs?latest=true|false&type=&name=, newest first.
func (cb *configBook) listConfigs(w http.ResponseWriter, r *http.Request, _ string) {
	q := r.URL.Query()
	if !q.Has("latest") {
		writeError(w, http.StatusBadRequest, codeMissingField, "'latest' is required")
		return
	}
	latestOnly := q.Get("latest") == "true"
	out := []configView{}
	seen := map[[2]string]bool{}
	cb.db.mu.RLock()
	for _, c := range slices.Backward(cb.db.configs) {
		key := [2]string{c.typ, c.name}
		current := !seen[key]
		seen[key] = true
		if (latestOnly && !current) || (q.Get("type") != "" && q.Get("type") != c.typ) || (q.Get("name") != "" && q.Get("name") != c.name) {
			continue
		}
		out = append(out, c.view(current))
	}
	cb.db.mu.RUnlock()
	writeJSON(w, http.StatusOK, out)
}

// getConfig is GET /configs/:id. The Director finds only ids written as
// Ruby's to_i writes them back ("7", not "07").
func (cb *configBook) getConfig(w http.ResponseWriter, r *http.Request, _ string) {
	raw := r.PathValue("id")
	id, err := strconv.Atoi(raw)
	if err == nil && strconv.Itoa(id) == raw {
		cb.db.mu.RLock()
		i := slices.IndexFunc(cb.db.configs, func(c config) bool { return c.id == id })
		if i >= 0 {
			c := cb.db.configs[i]
			v := c.view(cb.latestLocked(c.typ, c.name).id == c.id)
			cb.db.mu.RUnlock()
			writeJSON(w, http.StatusOK, v)
			return
		}
		cb.db.mu.RUnlock()
	}
	writeError(w, http.StatusNotFound, codeConfigNotFound, "Config %s not found", raw)
}

// listTypedConfigs is GET /cloud_configs (runtime, cpi) ?limit=N[&name=]:
// the configs of that type and name, newest first.
func (cb *configBook) listTypedConfigs(k configKind) handler {
	return func(w http.ResponseWriter, r *http.Request, _ string) {
		if k == cpiConfigKind && !cb.gate.requireAdmin(w, r) {
			return
		}
		limit, msg := typedConfigLimit(r)
		if msg != "" {
			writeText(w, http.StatusBadRequest, msg)
			return
		}
		if limit < 1 { // Sequel refuses it; the Director answers an empty 500
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		name, out := k.nameOf(r), []typedConfigView{}
		cb.db.mu.RLock()
		for _, c := range slices.Backward(cb.db.configs) {
			if len(out) == limit {
				break
			}
			if c.typ == k.typ && c.name == name {
				out = append(out, typedConfigView{Properties: c.content, CreatedAt: c.createdAtText()})
			}
		}
		cb.db.mu.RUnlock()
		writeJSON(w, http.StatusOK, out)
	}
}

// typedConfigLimit reads ?limit= as Ruby's Integer() does (blanks around
// it, 0x/0o/0b prefixes, underscores); msg is the Director's plain-text
// refusal.
func typedConfigLimit(r *http.Request) (limit int, msg string) {
	v, _ := lastValue(r.URL.Query(), "limit")
	if v == "" {
		return 0, "limit is required"
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64) // out of range: n is the nearest int64
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, "limit is invalid: '" + v + "' is not an integer"
	}
	return int(max(min(n, math.MaxInt32), math.MinInt32)), ""
}

// readConfigBody reads a typed config route's body: only text/yaml, as the
// Director's routes consume; false when it has answered.
func readConfigBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "text/yaml" {
		endpointNotFound(w, r)
		return "", false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxManifest))
	if err != nil {
		writeError(w, http.StatusBadRequest, codeValidationType, "Reading the config: %v", err)
		return "", false
	}
	return string(body), true
}

func writeConfigError(w http.ResponseWriter, err error) {
	var me *manifestError
	if !errors.As(err, &me) {
		panic("bosh director simulator: config refused without a Director error: " + err.Error())
	}
	writeError(w, http.StatusBadRequest, me.code, "%s", me.msg)
}

// postTypedConfig is POST /cloud_configs (runtime, cpi) [?name=], text/yaml:
// 201 and a new config unless the body is the current one's; an update
// event either way but the unchanged one, with the error when refused.
func (cb *configBook) postTypedConfig(k configKind) handler {
	return func(w http.ResponseWriter, r *http.Request, user string) {
		text, ok := readConfigBody(w, r)
		if !ok {
			return
		}
		if err := cb.storeConfig(k, k.nameOf(r), text, user); err != nil {
			writeConfigError(w, err)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}
}

// storeConfig checks and stores a config as the Director's controllers do.
// The Director checks a cpi config once it has found it changed; the
// current one passed the check, so checking first answers the same.
func (cb *configBook) storeConfig(k configKind, name, text, user string) error {
	root, err := parseConfig(text)
	switch {
	case err == nil && k == runtimeConfigKind:
		text = runtimeDump(root)
	case err == nil && k == cpiConfigKind:
		err = checkCPIs(root)
	}
	cb.db.mu.Lock()
	defer cb.db.mu.Unlock()
	if latest := cb.latestLocked(k.typ, name); err == nil && latest != nil && latest.content == text {
		return nil // unchanged: nothing stored, no event
	}
	if err == nil {
		cb.addLocked(k.typ, name, text)
	}
	e := event{user: user, action: "update", objectType: k.objectType}
	if k.named {
		e.objectName = name
	}
	if err != nil {
		e.err = err.Error()
	}
	cb.rec.recordLocked(e)
	return err
}

// configDiffAnswer is the answer of POST /cloud_configs/diff (runtime, cpi).
type configDiffAnswer struct {
	Diff [][2]any `json:"diff"`
}

// diffTypedConfig is POST /cloud_configs/diff (runtime, cpi) [?name=]
// [&redact=false], text/yaml: the body against the current config of that
// type and name (nothing when none).
func (cb *configBook) diffTypedConfig(k configKind) handler {
	return func(w http.ResponseWriter, r *http.Request, _ string) {
		text, ok := readConfigBody(w, r)
		if !ok {
			return
		}
		after, err := parseConfig(text)
		if err != nil {
			writeConfigError(w, err)
			return
		}
		current := ""
		cb.db.mu.RLock()
		if latest := cb.latestLocked(k.typ, k.nameOf(r)); latest != nil {
			current = latest.content
		}
		cb.db.mu.RUnlock()
		before, _ := parseConfig(current) // none, or unreadable (SetCloudConfig stores anything): nil
		redactParam, _ := lastValue(r.URL.Query(), "redact")
		redact := k.redacts && redactParam != "false"
		writeJSON(w, http.StatusOK, configDiffAnswer{Diff: yamlLineDiff(before, after, redact)})
	}
}

// Director error codes of the typed config routes.
const (
	codeConfigNotFound = 440012 // ConfigNotFound, answered 404
	codeDuplicateCPI   = 550000 // CpiDuplicateName
)

func badConfig(msg string) error { return &manifestError{code: codeBadManifest, msg: msg} }

// parseConfig reads a config as the Director's validate_manifest_yml: not
// empty, YAML, a mapping. Decoding into Go values first refuses recursive
// or excessive aliasing; the node tree keeps the keys' order. The YAML
// error is yaml.v3's, not Psych's.
func parseConfig(text string) (*yaml.Node, error) {
	if text == "" {
		return nil, badConfig("Manifest should not be empty")
	}
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return nil, badConfig("Incorrect YAML structure of the uploaded manifest: " + err.Error())
	}
	switch v.(type) {
	case map[string]any, map[any]any:
	default:
		return nil, badConfig("Manifest should be a hash")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, badConfig("Incorrect YAML structure of the uploaded manifest: " + err.Error())
	}
	return doc.Content[0], nil
}
