package sim

import (
	"net/http"
	"regexp"
	"strings"
)

// variableRef finds the ((name)) placeholders of a manifest.
var variableRef = regexp.MustCompile(`\(\(\s*(!?[A-Za-z0-9_./:-]+)\s*\)\)`)

type variableView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// getVariables is GET /deployments/:name/variables: the variables its
// manifest uses (its ((placeholders)) and variables: section), each named
// as the config server stores it, /<director>/<deployment>/<name>, with the
// id the config server gave it.
func (dp *deploys) getVariables(w http.ResponseWriter, r *http.Request, _ string) {
	name := r.PathValue("name")
	text, ok := dp.manifestOf(w, name)
	if !ok {
		return
	}
	out := []variableView{}
	seen := map[string]bool{}
	add := func(v string) {
		v = strings.TrimPrefix(v, "!")
		v, _, _ = strings.Cut(v, ".") // ((tls.certificate)) is the variable tls
		if v == "" || seen[v] {
			return
		}
		seen[v] = true
		full := v
		if !strings.HasPrefix(v, "/") {
			full = "/" + dp.director + "/" + name + "/" + v
		}
		out = append(out, variableView{ID: stableUUID("variable", full), Name: full})
	}
	for _, m := range variableRef.FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	if h, err := parseConfig(text); err == nil {
		if i := keyIndex(h, "variables"); i >= 0 {
			for _, v := range h.Content[i+1].Content {
				if j := keyIndex(v, "name"); j >= 0 {
					add(v.Content[j+1].Value)
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}
