package sim

import (
	"cmp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

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
			cp.Tag, cp.Value, cp.Style = "!!str", "<redacted>", yaml.DoubleQuotedStyle // Psych quotes it
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
