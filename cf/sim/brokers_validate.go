package sim

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// brokerMessage is a create or update request's body, checked as
// ServiceBrokerCreateMessage / ServiceBrokerUpdateMessage do.
type brokerMessage struct {
	body     map[string]any
	name     string
	url      string
	auth     credentials
	space    string
	has      func(key string) bool
	problems []string
}

// readBrokerMessage checks body; create requires name, url and authentication.
func readBrokerMessage(body map[string]any, create bool) brokerMessage {
	m := brokerMessage{body: body, has: func(k string) bool { _, ok := body[k]; return ok }}
	allowed := []string{"name", "url", "authentication", "metadata"}
	if create {
		allowed = append(allowed, "relationships")
	}
	if create || m.has("name") {
		m.name = m.str("Name", body["name"])
		if m.name == "" && body["name"] == "" {
			m.problems = append(m.problems, "Name must not be empty string")
		}
	}
	if create || m.has("url") {
		m.url = m.str("Url", body["url"])
		m.checkURL(fmt.Sprint(or(m.url, "")))
	}
	if create || m.has("authentication") {
		m.checkAuth(body["authentication"])
	}
	if rel, ok := body["relationships"]; create && ok {
		m.checkSpace(rel)
	}
	if unknown := unknownKeys(body, allowed); unknown != "" {
		m.problems = append(m.problems, unknown)
	}
	return m
}

func (m *brokerMessage) str(attr string, v any) string {
	s, ok := v.(string)
	if !ok {
		m.problems = append(m.problems, attr+" must be a string")
	}
	return s
}

func (m *brokerMessage) checkURL(raw string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		m.problems = append(m.problems, fmt.Sprintf("Url '%s' must be a valid url", raw))
	case u.User != nil:
		m.problems = append(m.problems, "Url must not contain authentication")
	case !isLoopbackURL(raw):
		m.problems = append(m.problems, "Url must be a loopback address (http(s)://127.x.x.x or localhost): cf/sim reaches nothing else")
	}
}

func (m *brokerMessage) checkAuth(v any) {
	auth, ok := v.(map[string]any)
	if !ok {
		m.problems = append(m.problems, "Authentication must be an object")
		return
	}
	if unknown := unknownKeys(auth, []string{"type", "credentials"}); unknown != "" {
		m.problems = append(m.problems, "Authentication "+unknown)
	}
	if auth["type"] != "basic" {
		m.problems = append(m.problems, `Authentication authentication.type must be one of ["basic"]`)
	}
	creds, ok := auth["credentials"].(map[string]any)
	if !ok {
		m.problems = append(m.problems, "Authentication credentials must be an object")
		return
	}
	var fields, msgs []string
	for _, k := range []string{"username", "password"} {
		s, isString := creds[k].(string)
		if !isString {
			msgs = append(msgs, fmt.Sprintf("%q", strings.ToUpper(k[:1])+k[1:]+" must be a string"))
		}
		if strings.TrimSpace(s) == "" {
			msgs = append(msgs, fmt.Sprintf("%q", strings.ToUpper(k[:1])+k[1:]+" can't be blank"))
		}
		if !isString || strings.TrimSpace(s) == "" {
			fields = append(fields, fmt.Sprintf("%q", k))
		}
	}
	if unknown := unknownKeys(creds, []string{"username", "password"}); unknown != "" {
		fields, msgs = append(fields, `"base"`), append(msgs, fmt.Sprintf("%q", unknown))
	}
	if len(msgs) > 0 {
		m.problems = append(m.problems, fmt.Sprintf("Authentication Field(s) [%s] must be valid: [%s]", strings.Join(fields, ", "), strings.Join(msgs, ", ")))
	}
	m.auth = credentials{username: fmt.Sprint(creds["username"]), password: fmt.Sprint(creds["password"])}
}

func (m *brokerMessage) checkSpace(v any) {
	const shape = `Relationships Space must be structured like this: "space: {"data": {"guid": "valid-guid"}}"`
	rel, ok := v.(map[string]any)
	if !ok {
		m.problems = append(m.problems, "Relationships 'relationships' is not an object")
		return
	}
	space, _ := rel["space"].(map[string]any)
	data, _ := space["data"].(map[string]any)
	guid, ok := data["guid"].(string)
	if !ok || guid == "" {
		m.problems = append(m.problems, shape)
		return
	}
	m.space = guid
}

// unknownKeys is NoAdditionalKeysValidator's message, or "".
func unknownKeys(body map[string]any, allowed []string) string {
	var unknown []string
	for k := range body {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, "'"+k+"'")
		}
	}
	if len(unknown) == 0 {
		return ""
	}
	sort.Strings(unknown)
	return "Unknown field(s): " + strings.Join(unknown, ", ")
}
