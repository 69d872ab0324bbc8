package sim

import (
	"cmp"
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

// SetCloudConfig uploads a new default cloud config: deployments deployed
// before it show cloud_config "outdated".
func (d *Director) SetCloudConfig(content string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addConfigLocked("cloud", "default", content)
}

func (d *Director) addConfigLocked(typ, name, content string) {
	d.configs = append(d.configs, newConfig(d.configs[len(d.configs)-1].id+1, typ, name, content))
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

// latestConfigLocked is the current config of a type and name, nil when none.
func (d *Director) latestConfigLocked(typ, name string) *config {
	for i := len(d.configs) - 1; i >= 0; i-- {
		if c := &d.configs[i]; c.typ == typ && c.name == name {
			return c
		}
	}
	return nil
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
		out = append(out, c.view(current))
	}
	d.mu.RUnlock()
	writeJSON(w, http.StatusOK, out)
}

// getConfig is GET /configs/:id. The Director finds only ids written as
// Ruby's to_i writes them back ("7", not "07").
func (d *Director) getConfig(w http.ResponseWriter, r *http.Request, _ string) {
	raw := r.PathValue("id")
	id, err := strconv.Atoi(raw)
	if err == nil && strconv.Itoa(id) == raw {
		d.mu.RLock()
		i := slices.IndexFunc(d.configs, func(c config) bool { return c.id == id })
		if i >= 0 {
			c := d.configs[i]
			v := c.view(d.latestConfigLocked(c.typ, c.name).id == c.id)
			d.mu.RUnlock()
			writeJSON(w, http.StatusOK, v)
			return
		}
		d.mu.RUnlock()
	}
	writeError(w, http.StatusNotFound, codeConfigNotFound, "Config %s not found", raw)
}

// listTypedConfigs is GET /cloud_configs (runtime, cpi) ?limit=N[&name=]:
// the configs of that type and name, newest first.
func (d *Director) listTypedConfigs(k configKind) handler {
	return func(w http.ResponseWriter, r *http.Request, _ string) {
		if k == cpiConfigKind && !d.requireAdmin(w, r) {
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
		d.mu.RLock()
		for _, c := range slices.Backward(d.configs) {
			if len(out) == limit {
				break
			}
			if c.typ == k.typ && c.name == name {
				out = append(out, typedConfigView{Properties: c.content, CreatedAt: c.createdAtText()})
			}
		}
		d.mu.RUnlock()
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

// requireAdmin answers 401 (600000) unless the caller has the admin scope:
// GET /cpi_configs names no scope, so it needs the default one.
func (d *Director) requireAdmin(w http.ResponseWriter, r *http.Request) bool {
	if id, _ := d.identify(r); id.admin {
		return true
	}
	writeError(w, http.StatusUnauthorized, codeScope, "Require one of the scopes: bosh.admin, bosh.%s.admin", d.opts.UUID)
	return false
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
func (d *Director) postTypedConfig(k configKind) handler {
	return func(w http.ResponseWriter, r *http.Request, user string) {
		text, ok := readConfigBody(w, r)
		if !ok {
			return
		}
		if err := d.storeConfig(k, k.nameOf(r), text, user); err != nil {
			writeConfigError(w, err)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}
}

// storeConfig checks and stores a config as the Director's controllers do.
// The Director checks a cpi config once it has found it changed; the
// current one passed the check, so checking first answers the same.
func (d *Director) storeConfig(k configKind, name, text, user string) error {
	root, err := parseConfig(text)
	switch {
	case err == nil && k == runtimeConfigKind:
		text = runtimeDump(root)
	case err == nil && k == cpiConfigKind:
		err = checkCPIs(root)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if latest := d.latestConfigLocked(k.typ, name); err == nil && latest != nil && latest.content == text {
		return nil // unchanged: nothing stored, no event
	}
	if err == nil {
		d.addConfigLocked(k.typ, name, text)
	}
	e := event{user: user, action: "update", objectType: k.objectType}
	if k.named {
		e.objectName = name
	}
	if err != nil {
		e.err = err.Error()
	}
	d.recordLocked(e)
	return err
}

// configDiffAnswer is the answer of POST /cloud_configs/diff (runtime, cpi).
type configDiffAnswer struct {
	Diff [][2]any `json:"diff"`
}

// diffTypedConfig is POST /cloud_configs/diff (runtime, cpi) [?name=]
// [&redact=false], text/yaml: the body against the current config of that
// type and name (nothing when none).
func (d *Director) diffTypedConfig(k configKind) handler {
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
		d.mu.RLock()
		if latest := d.latestConfigLocked(k.typ, k.nameOf(r)); latest != nil {
			current = latest.content
		}
		d.mu.RUnlock()
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

// runtimeDump is the text the Director stores for a runtime config: its
// ensure_release_version_is_string writes releases[].version as strings
// (Ruby's to_s: 1.10 is "1.1") and YAML.dump re-dumps the whole, starting
// with "---". The simulator re-dumps with yaml.v3: the same data, not
// Psych's exact layout (sequences indented, double quotes).
func runtimeDump(root *yaml.Node) string {
	m := plainNode(root, false)
	if rels := configValue(m, "releases"); rels != nil && rels.Kind == yaml.SequenceNode {
		for _, rel := range rels.Content {
			if v := configValue(rel, "version"); v != nil && v.Kind == yaml.ScalarNode {
				stringifyVersion(v)
			}
		}
	}
	return "---\n" + encodeYAML(m)
}

func stringifyVersion(v *yaml.Node) {
	var x any
	if v.Decode(&x) != nil || x == nil || x == false {
		return // Ruby's `if rel['version']`
	}
	switch n := x.(type) {
	case int:
		v.Value = strconv.Itoa(n)
	case float64:
		if v.Value = strconv.FormatFloat(n, 'f', -1, 64); !strings.Contains(v.Value, ".") {
			v.Value += ".0"
		}
	}
	v.Tag = "!!str"
}

// checkCPIs checks a cpi config as the Director's CpiManifestParser: cpis
// a list of mappings with a string name and type and an optional
// migrated_from list of names; no name twice among all of them.
func checkCPIs(root *yaml.Node) error {
	cpis, err := safeProperty(root, "cpis", "Array", false)
	if err != nil {
		return err
	}
	var names []string
	for _, cpi := range cpis.Content {
		n, err := cpiNames(cpi)
		if err != nil {
			return err
		}
		names = append(names, n...)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return &manifestError{code: codeDuplicateCPI, msg: "Duplicate cpi name '" + n + "'"}
		}
		seen[n] = true
	}
	return nil
}

// cpiNames checks a cpi as the Director's Cpi.parse does and returns the
// names it takes: those it migrated from, then its own.
func cpiNames(cpi *yaml.Node) ([]string, error) {
	name, err := safeProperty(cpi, "name", "String", false)
	if err != nil {
		return nil, err
	}
	if _, err := safeProperty(cpi, "type", "String", false); err != nil {
		return nil, err
	}
	migrated, err := safeProperty(cpi, "migrated_from", "Array", true)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := 0; migrated != nil && i < len(migrated.Content); i++ {
		from, err := safeProperty(migrated.Content[i], "name", "String", false)
		if err != nil {
			return nil, err
		}
		names = append(names, from.Value)
	}
	return append(names, name.Value), nil
}

// safeProperty is the Director's ValidationHelper#safe_property: obj must
// be a mapping (or null), key present unless optional (nil then), its value
// of class Array, Hash or String (a number counts as a String).
func safeProperty(obj *yaml.Node, key, class string, optional bool) (*yaml.Node, error) {
	obj = deref(obj)
	if obj != nil && obj.Tag == "!!null" {
		obj = nil
	}
	if obj != nil && obj.Kind != yaml.MappingNode {
		return nil, &manifestError{code: codeValidationType,
			msg: "Object (" + rubyInspect(obj) + ") did not match the required type 'Hash'"}
	}
	v := deref(configValue(obj, key))
	switch {
	case v == nil && optional:
		return nil, nil
	case v == nil:
		return nil, missing(key, rubyInspect(obj))
	case class == "Array" && v.Kind == yaml.SequenceNode, class == "Hash" && v.Kind == yaml.MappingNode,
		class == "String" && v.Kind == yaml.ScalarNode && slices.Contains([]string{"!!str", "!!int", "!!float"}, v.Tag):
		return v, nil
	}
	return nil, &manifestError{code: codeValidationType,
		msg: "Property '" + key + "' value (" + rubyInspect(v) + ") did not match the required type '" + class + "'"}
}

// maxInspect cuts the objects quoted in messages: the Director quotes them
// whole, which for a large config would be stored again in every event.
const maxInspect = 1000

// rubyInspect writes a parsed YAML value as Ruby 3.4's inspect does:
// {"name" => "c1", "n" => 1}, [nil, true].
func rubyInspect(n *yaml.Node) string {
	var b strings.Builder
	inspectTo(&b, n)
	if b.Len() > maxInspect {
		return strings.ToValidUTF8(b.String()[:maxInspect], "") + "..."
	}
	return b.String()
}

func inspectTo(b *strings.Builder, n *yaml.Node) {
	n = deref(n)
	switch {
	case b.Len() > maxInspect:
	case n == nil || n.Tag == "!!null":
		b.WriteString("nil")
	case n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode:
		open, end := "[", "]"
		if n.Kind == yaml.MappingNode {
			open, end = "{", "}"
		}
		b.WriteString(open)
		for i, c := range n.Content {
			switch {
			case n.Kind == yaml.MappingNode && i%2 == 1:
				b.WriteString(" => ")
			case i > 0:
				b.WriteString(", ")
			}
			inspectTo(b, c)
		}
		b.WriteString(end)
	case n.Tag == "!!bool":
		b.WriteString(strings.ToLower(n.Value))
	case n.Tag == "!!int" || n.Tag == "!!float":
		b.WriteString(n.Value)
	default:
		b.WriteString(strconv.Quote(n.Value))
	}
}

// deref follows aliases and documents to the value they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.AliasNode || n.Kind == yaml.DocumentNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	return n
}

// configValue is the value of key in mapping m, nil when m has none.
func configValue(m *yaml.Node, key string) *yaml.Node {
	if m = deref(m); m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if deref(m.Content[i]).Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// yaml11Bools are the strings YAML 1.1 readers (the CLI's yaml.v2; Psych
// all but y and n) take for booleans and yaml.v3 writes unquoted.
var yaml11Bools = map[string]bool{"yes": true, "no": true, "on": true, "off": true, "y": true, "n": true}

// plainNode is a copy of a parsed YAML value as Ruby holds it once loaded:
// aliases expanded, anchors, comments and styles dropped. With redact,
// every scalar under a properties or bosh key whose value is a mapping
// reads "<redacted>", as the Director's Redactor writes them.
func plainNode(n *yaml.Node, redact bool) *yaml.Node { return plainCopy(n, redact, false) }

func plainCopy(n *yaml.Node, redact, under bool) *yaml.Node {
	n = deref(n)
	cp := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Value: n.Value}
	if n.Kind == yaml.ScalarNode {
		if under {
			cp.Tag, cp.Value = "!!str", "<redacted>"
		}
		if cp.Tag == "!!str" && yaml11Bools[strings.ToLower(cp.Value)] {
			cp.Style = yaml.DoubleQuotedStyle
		}
		return cp
	}
	for i, c := range n.Content {
		value := n.Kind != yaml.MappingNode || i%2 == 1
		within := under && value
		if redact && n.Kind == yaml.MappingNode && value && deref(c).Kind == yaml.MappingNode {
			k := deref(n.Content[i-1]).Value
			within = within || k == "properties" || k == "bosh"
		}
		cp.Content = append(cp.Content, plainCopy(c, redact, within))
	}
	return cp
}

func encodeYAML(n *yaml.Node) string {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if enc.Encode(n) != nil || enc.Close() != nil {
		return "" // a tree copied from a parsed one always encodes
	}
	return b.String()
}

// configSectionOrder is the order the Director's diff gives top-level keys
// (DiffLines::MANIFEST_KEYS_ORDER); the others follow by name.
var configSectionOrder = []string{"azs", "vm_types", "vm_extensions", "resource_pools", "compilation",
	"networks", "disk_types", "name", "stemcells", "releases", "update", "jobs", "release", "addons", "variables"}

// configLines renders a config as the lines its diff compares. Below the
// top level, keys are sorted, "name" first: the Director compares hashes,
// which the key order of the stored text and of the CLI's re-serialized
// body must not change.
func configLines(root *yaml.Node, redact bool) []string {
	if root == nil {
		return nil
	}
	m := plainNode(root, redact)
	if len(m.Content) == 0 {
		return nil
	}
	sortPairs(m, func(key string) int {
		if i := slices.Index(configSectionOrder, key); i >= 0 {
			return i
		}
		return len(configSectionOrder)
	})
	for i := 1; i < len(m.Content); i += 2 {
		sortNested(m.Content[i])
	}
	return strings.Split(strings.TrimSuffix(encodeYAML(m), "\n"), "\n")
}

func sortNested(n *yaml.Node) {
	for _, c := range n.Content {
		sortNested(c)
	}
	if n.Kind == yaml.MappingNode {
		sortPairs(n, func(key string) int { return btoi(key != "name") })
	}
}

// sortPairs sorts a mapping's pairs by rank of their key, then by key.
func sortPairs(m *yaml.Node, rank func(string) int) {
	pairs := make([][2]*yaml.Node, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		pairs = append(pairs, [2]*yaml.Node{m.Content[i], m.Content[i+1]})
	}
	slices.SortStableFunc(pairs, func(a, b [2]*yaml.Node) int {
		return cmp.Or(cmp.Compare(rank(a[0].Value), rank(b[0].Value)), cmp.Compare(a[0].Value, b[0].Value))
	})
	m.Content = m.Content[:0]
	for _, p := range pairs {
		m.Content = append(m.Content, p[0], p[1])
	}
}

// yamlLineDiff is the diff of two configs (nil: none) as the typed config
// routes answer it: [line, "added" | "removed" | nil], each changed line
// after the unchanged lines that hold it (the nearest one of each smaller
// indentation), written once, and an empty line before each top-level key.
// Lines are compared unredacted and shown redacted, so a changed secret
// shows as a removed and an added "<redacted>" as the Director shows it;
// when redaction changes the number of lines (a multi-line secret) they
// are compared redacted.
func yamlLineDiff(before, after *yaml.Node, redact bool) [][2]any {
	a, b := configLines(before, false), configLines(after, false)
	aShown, bShown := a, b
	if redact {
		aShown, bShown = configLines(before, true), configLines(after, true)
		if len(aShown) != len(a) || len(bShown) != len(b) {
			a, b = aShown, bShown
		}
	}
	out := [][2]any{}
	var beforeOpen, afterOpen []*diffLine // each side's unchanged lines holding the current one
	show := func(l *diffLine, status any) {
		if l.indent == 0 && len(out) > 0 {
			out = append(out, [2]any{"", nil})
		}
		l.shown = true
		out = append(out, [2]any{l.text, status})
	}
	changed := func(open []*diffLine, l *diffLine, status string) []*diffLine {
		open = closeTo(open, l.indent)
		for _, p := range open {
			if !p.shown {
				show(p, nil)
			}
		}
		show(l, status)
		return append(open, l)
	}
	for _, e := range lineEdits(a, b) {
		switch {
		case e.i < 0:
			afterOpen = changed(afterOpen, newDiffLine(bShown[e.j]), "added")
		case e.j < 0:
			beforeOpen = changed(beforeOpen, newDiffLine(aShown[e.i]), "removed")
		default:
			l := newDiffLine(bShown[e.j])
			beforeOpen, afterOpen = append(closeTo(beforeOpen, l.indent), l), append(closeTo(afterOpen, l.indent), l)
		}
	}
	return out
}

// diffLine is a line of a config diff and whether it is written.
type diffLine struct {
	text   string
	indent int // leading blanks; a "- " item one more, so its lines count it as their parent
	shown  bool
}

func newDiffLine(text string) *diffLine {
	n := len(text) - len(strings.TrimLeft(text, " "))
	if strings.HasPrefix(text[n:], "- ") {
		n++
	}
	return &diffLine{text: text, indent: n}
}

// closeTo drops the open lines that cannot hold a line of this indentation.
func closeTo(open []*diffLine, indent int) []*diffLine {
	for len(open) > 0 && open[len(open)-1].indent >= indent {
		open = open[:len(open)-1]
	}
	return open
}

// lineEdit is a step of a line diff: a line of both sides (i, j), of the
// first only (j < 0, removed) or of the second only (i < 0, added).
type lineEdit struct{ i, j int }

// maxDiffCells bounds the table of lineEdits (4 bytes a cell).
const maxDiffCells = 1 << 21

// lineEdits edits a into b by a longest common subsequence of the lines
// between their common head and tail; a middle too large for maxDiffCells
// is all removed, then all added.
func lineEdits(a, b []string) []lineEdit {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	var edits []lineEdit
	for k := range head {
		edits = append(edits, lineEdit{k, k})
	}
	if len(ma)*len(mb) > maxDiffCells {
		for i := range ma {
			edits = append(edits, lineEdit{head + i, -1})
		}
		for j := range mb {
			edits = append(edits, lineEdit{-1, head + j})
		}
	} else {
		edits = append(edits, lcsEdits(ma, mb, head)...)
	}
	for k := range tail {
		edits = append(edits, lineEdit{len(a) - tail + k, len(b) - tail + k})
	}
	return edits
}

// lcsEdits is lineEdits of two middles by longest common subsequence; off
// is where they start.
func lcsEdits(a, b []string, off int) []lineEdit {
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w) // lcs[i*w+j]: of a[i:] and b[j:]
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	var edits []lineEdit
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			edits = append(edits, lineEdit{off + i, off + j})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			edits = append(edits, lineEdit{off + i, -1})
			i++
		default:
			edits = append(edits, lineEdit{-1, off + j})
			j++
		}
	}
	return edits
}
