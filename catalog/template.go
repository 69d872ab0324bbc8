package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxRenderedBytes bounds what one template may render: a template that
// ranges over a platform user's list cannot grow a manifest without bound.
const MaxRenderedBytes = 4 << 20

// ErrTooLarge is returned by Template.Render when the output would exceed
// MaxRenderedBytes.
var ErrTooLarge = errors.New("rendered template is too large")

// escapeFunc is the function every output action of a template ends with
// (see Template). Its name is not meant to be called by templates, although
// calling it is harmless.
const escapeFunc = "blacksmithYAMLValue"

// ManifestData is what a plan's manifest template sees.
type ManifestData struct {
	// DeploymentName is the BOSH deployment's name, {planID}-{instanceID}.
	DeploymentName string
	// InstanceID, ServiceID and PlanID identify the instance.
	InstanceID, ServiceID, PlanID string
	// OrganizationGUID and SpaceGUID are the platform's org and space.
	OrganizationGUID, SpaceGUID string
	// Params are the request's parameters (never nil).
	Params map[string]any
	// Secrets are the instance's generated secrets (password, username).
	Secrets map[string]any
	// Bindings are the instance's live bindings, in the order they were
	// created, each with its own secrets, for a plan with per_binding
	// credentials (a template declares a user per binding); empty (never
	// nil) for a shared plan.
	Bindings []Binding
}

// Binding is one binding as the templates see it.
type Binding struct {
	// ID is the binding's id.
	ID string
	// Secrets are its own generated secrets (username, password) for a
	// per_binding plan; empty (never nil) for a shared one.
	Secrets map[string]any
}

// CredentialsData is what a plan's credentials template sees. Its Params
// are the instance's (as recorded), so that credentials name what the
// manifest made; the bind's own are BindParams.
type CredentialsData struct {
	ManifestData
	// BindParams are the bind request's parameters (never nil).
	BindParams map[string]any
	// IPs are the addresses of the deployment's VMs, in the Director's order.
	IPs []string
	// Host is the first of IPs, "" when there is none.
	Host string
	// BindingID and AppGUID identify the binding.
	BindingID, AppGUID string
	// Binding is the binding being made: its id and, for a per_binding
	// plan, its own secrets.
	Binding Binding
}

// Template is a plan's manifest or credentials template (Go text/template)
// made safe for data a platform user controls: the output of every action
// ({{ ... }} that prints) is written as one YAML flow value, as JSON writes
// it (a string is double-quoted and escaped, a number or boolean is bare, a
// list or mapping is a flow collection on one line). No value can end a
// line, open a key, a document or a comment, so no parameter can change the
// structure the template gives the manifest. A pipeline that ends with
// printf "%q" (which the earlier, unescaped templates needed) has it
// dropped: the quoting it did is what every action now gets.
//
// Values are YAML-safe, not safe for whatever reads them later: a value the
// template puts inside a shell script is still a value a user chose.
type Template struct {
	name    string
	text    string
	tmpl    *template.Template
	secrets bool
}

// yamlText is text already written as a YAML value; the escape function
// passes it on as it is.
type yamlText string

// funcs are the functions templates may call besides text/template's own.
var funcs = template.FuncMap{
	// toJSON writes v as JSON, which YAML reads as one flow value.
	"toJSON": yamlValue,
	// default returns def when v is missing or empty: {{ default 2 .Params.instances }}.
	"default": func(def, v any) any {
		if v == nil || v == "" {
			return def
		}
		return v
	},
	escapeFunc: yamlValue,
}

// ParseTemplate parses text as a template named name and makes every
// output action escape its value (see Template).
func ParseTemplate(name, text string) (*Template, error) {
	t, err := template.New(name).Funcs(funcs).Option("missingkey=zero").Parse(text)
	if err != nil {
		return nil, err
	}
	// Any mention counts (.Secrets, $.Secrets, index . "Secrets"): a
	// template that reads them must not be rendered without them.
	out := &Template{name: name, text: text, tmpl: t, secrets: strings.Contains(text, "Secrets")}
	for _, sub := range t.Templates() {
		if sub.Tree != nil && sub.Root != nil {
			escapeList(sub.Root)
		}
	}
	return out, nil
}

// Text is the template as written.
func (t *Template) Text() string { return t.text }

// UsesSecrets says whether the template reads .Secrets.
func (t *Template) UsesSecrets() bool { return t.secrets }

// Render executes the template with data. The output is at most
// MaxRenderedBytes (ErrTooLarge beyond).
func (t *Template) Render(data any) ([]byte, error) {
	w := &boundedBuffer{max: MaxRenderedBytes}
	if err := t.tmpl.Execute(w, data); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, fmt.Errorf("rendering %s template: %w (over %d bytes)", t.name, ErrTooLarge, MaxRenderedBytes)
		}
		return nil, fmt.Errorf("rendering %s template: %w", t.name, err)
	}
	return w.buf.Bytes(), nil
}

// RenderMapping renders the template, whose output must be a YAML mapping.
func (t *Template) RenderMapping(data any) (map[string]any, error) {
	out, err := t.Render(data)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("%s template: output is not a YAML mapping: %w", t.name, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// boundedBuffer is a bytes.Buffer that refuses to grow past max.
type boundedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.max {
		return 0, ErrTooLarge
	}
	return b.buf.Write(p)
}

// yamlValue writes v as one YAML flow value (see Template).
func yamlValue(v any) (yamlText, error) {
	switch x := v.(type) {
	case yamlText:
		return x, nil
	case nil:
		return "null", nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("writing a %T as a YAML value: %w", v, err)
	}
	return yamlText(escapeUnprintable(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))), nil
}

// escapeUnprintable escapes, as \uXXXX, the characters JSON leaves as they
// are but YAML does not accept in a document or reads as a line break
// (DEL, the C1 controls with NEL, the byte order mark, U+FFFE and U+FFFF;
// JSON escapes U+2028 and U+2029 itself). JSON's output holds
// them only inside strings, where the escape means the same character.
func escapeUnprintable(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfeff || r == 0xfffe || r == 0xffff {
			fmt.Fprintf(&sb, `\u%04x`, r)
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

// escapeList makes every output action under n end with the escape function.
func escapeList(n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			escapeList(c)
		}
	case *parse.ActionNode:
		if len(n.Pipe.Decl) == 0 {
			escapePipe(n.Pipe)
		}
	case *parse.IfNode:
		escapeList(n.List)
		escapeList(n.ElseList)
	case *parse.RangeNode:
		escapeList(n.List)
		escapeList(n.ElseList)
	case *parse.WithNode:
		escapeList(n.List)
		escapeList(n.ElseList)
	}
}

// escapePipe drops a final printf "%q" and appends the escape function.
func escapePipe(p *parse.PipeNode) {
	last := p.Cmds[len(p.Cmds)-1]
	if isIdent(last.Args[0], escapeFunc) {
		return
	}
	if isIdent(last.Args[0], "printf") && len(last.Args) >= 2 {
		if s, ok := last.Args[1].(*parse.StringNode); ok && s.Text == "%q" {
			switch {
			case len(last.Args) == 2 && len(p.Cmds) > 1:
				p.Cmds = p.Cmds[:len(p.Cmds)-1]
			case len(last.Args) == 3:
				last.Args = last.Args[2:]
			}
		}
	}
	p.Cmds = append(p.Cmds, &parse.CommandNode{
		NodeType: parse.NodeCommand,
		Pos:      p.Pos,
		Args:     []parse.Node{parse.NewIdentifier(escapeFunc).SetTree(nil).SetPos(p.Pos)},
	})
}

func isIdent(n parse.Node, name string) bool {
	id, ok := n.(*parse.IdentifierNode)
	return ok && id.Ident == name
}
