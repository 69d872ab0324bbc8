package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ccsim "github.com/blacksmith-reconciler/blacksmith/cf/sim"
	"gopkg.in/yaml.v3"
)

// The alerting rules and the dashboard an operator deploys next to the
// daemon (manifests/prometheus, manifests/grafana): they must load, their
// alerts must fire when they should and only then, and every name they use
// must be one the real daemon exposes.
var _ = Describe("Monitoring: the alerting rules and the Grafana dashboard", func() {
	var rulesFile, rulesTest, dashboardFile string

	BeforeEach(func() {
		root := filepath.Dir(filepath.Dir(catalogDir))
		rulesFile = filepath.Join(root, "manifests", "prometheus", "blacksmith.rules.yml")
		rulesTest = filepath.Join(root, "manifests", "prometheus", "blacksmith.rules.test.yml")
		dashboardFile = filepath.Join(root, "manifests", "grafana", "blacksmith.json")
	})

	It("pass promtool: the rules check, their unit tests pass, and every dashboard expression parses", func() {
		promtool := promtoolPath()
		runPromtool(promtool, "check", "rules", rulesFile)
		runPromtool(promtool, "test", "rules", rulesTest)

		var rules strings.Builder
		rules.WriteString("groups:\n- name: dashboard\n  rules:\n")
		for i, e := range dashboardExprs(readDashboard(dashboardFile), false) {
			_, expr, _ := strings.Cut(e, ": ")
			fmt.Fprintf(&rules, "  - record: dashboard:expr_%d\n    expr: %q\n", i, grafanaVars.ReplaceAllStringFunc(expr, grafanaValue))
		}
		path := filepath.Join(GinkgoT().TempDir(), "dashboard.rules.yml")
		Expect(os.WriteFile(path, []byte(rules.String()), 0o600)).To(Succeed())
		runPromtool(promtool, "check", "rules", path)
	})

	It("use only metric names, label names and label values the daemon exposes", func() {
		cc, err := ccsim.New(ccsim.Options{}) // the platform's metrics are registered only with a cf section
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cc.Close)
		_, err = cc.Foundation().Seed("blacksmith", 0)
		Expect(err).NotTo(HaveOccurred())
		d := startDaemon(fmt.Sprintf("cf:\n  api: %s\n  client_id: %s\n  client_secret: %s\n  broker_name: blacksmith\n",
			cc.URL(), ccsim.DefaultClientID, ccsim.DefaultClientSecret))
		d.reconcile()
		for _, path := range []string{"/v2/catalog", "/b/reconcile", "/v2/service_instances/e2e-monitoring-1",
			"/v2/service_instances/e2e-monitoring-1/last_operation", "/b/runs", "/b/instances/e2e-monitoring-1", "/dashboard"} {
			user, pass := brokerUser, brokerPass
			if !strings.HasPrefix(path, "/v2/") {
				user, pass = opUser, opPass
			}
			code, body := d.get(path, user, pass)
			Expect(code).NotTo(BeZero(), body)
		}
		code, body := d.do(http.MethodPost, "/b/instances/e2e-monitoring-1/restore", opUser, opPass)
		Expect(code).To(Equal(http.StatusNotFound), body)
		code, text := d.get("/metrics", "", "")
		Expect(code).To(Equal(http.StatusOK))
		exposed := parseExposition(text)

		exprs, records := ruleExprs(rulesFile)
		exprs = append(exprs, dashboardExprs(readDashboard(dashboardFile), true)...)
		var problems, used []string
		for _, e := range exprs {
			names, p := checkExpr(e, exposed, records)
			used, problems = append(used, names...), append(problems, p...)
		}
		Expect(problems).To(BeEmpty())
		slices.Sort(used)
		Expect(len(slices.Compact(used))).To(BeNumerically(">=", 20), "the names were parsed out of the expressions")
	})

	It("give every alert a for:, a severity, a summary, a description and a runbook", func() {
		var file struct {
			Groups []struct {
				Rules []struct {
					Alert, Expr, For    string
					Labels, Annotations map[string]string
				}
			}
		}
		data, err := os.ReadFile(rulesFile)
		Expect(err).NotTo(HaveOccurred())
		Expect(yaml.Unmarshal(data, &file)).To(Succeed())
		alerts := 0
		for _, g := range file.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				alerts++
				Expect(r.For).NotTo(BeEmpty(), r.Alert)
				Expect(r.Labels).To(HaveKeyWithValue("severity", BeElementOf("critical", "warning", "info")), r.Alert)
				Expect(r.Annotations).To(SatisfyAll(HaveKey("summary"), HaveKey("description"), HaveKey("runbook")), r.Alert)
			}
		}
		Expect(alerts).To(BeNumerically(">=", 6))
	})

	It("hold a dashboard Grafana imports: valid JSON, a title, unique panel ids, core panels only, a data source variable", func() {
		dash := readDashboard(dashboardFile)
		Expect(dash["title"]).To(And(BeAssignableToTypeOf(""), Not(BeEmpty())))
		Expect(dash["schemaVersion"]).To(BeNumerically(">=", 36))
		Expect(dash["templating"]).To(HaveKeyWithValue("list", ContainElement(And(
			HaveKeyWithValue("name", "datasource"), HaveKeyWithValue("type", "datasource"), HaveKeyWithValue("query", "prometheus")))))
		ids := map[float64]string{}
		for _, p := range allPanels(dash["panels"]) {
			title := fmt.Sprint(p["title"])
			Expect(title).NotTo(BeEmpty())
			Expect(p["type"]).To(BeElementOf("row", "timeseries", "stat", "gauge", "bargauge", "table", "text", "heatmap"), title)
			id, ok := p["id"].(float64)
			Expect(ok).To(BeTrue(), "panel %q has no numeric id", title)
			Expect(ids).NotTo(HaveKey(id), "panel %q has the id of %q", title, ids[id])
			ids[id] = title
			if p["type"] == "row" {
				continue
			}
			Expect(p["datasource"]).To(HaveKeyWithValue("uid", "${datasource}"), title)
			targets, _ := p["targets"].([]any)
			Expect(targets).NotTo(BeEmpty(), title)
			for _, t := range targets {
				Expect(t).To(HaveKeyWithValue("expr", Not(BeEmpty())), title)
			}
		}
		Expect(len(ids)).To(BeNumerically(">=", 20))
	})
})

// promtoolPath is promtool's path: required under CI=true, else the spec skips.
func promtoolPath() string {
	GinkgoHelper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			Fail("promtool is required under CI=true (Debian package prometheus)")
		}
		Skip("promtool not installed (apt-get install prometheus)")
	}
	return path
}

// runPromtool runs promtool with args and expects exit code 0.
func runPromtool(promtool string, args ...string) {
	GinkgoHelper()
	cmd := exec.Command(promtool, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	Expect(cmd.Run()).To(Succeed(), "promtool %s:\n%s", strings.Join(args, " "), out.String())
}

// ruleExprs returns the expression of every rule of a rules file, each
// prefixed with the rule's name, and the names the recording rules define.
func ruleExprs(path string) ([]string, map[string]bool) {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	var file struct {
		Groups []struct {
			Rules []struct{ Alert, Record, Expr string }
		}
	}
	Expect(yaml.Unmarshal(data, &file)).To(Succeed())
	var exprs []string
	records := map[string]bool{}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, fmt.Sprintf("rule %q: %s", r.Alert+r.Record, r.Expr))
			if r.Record != "" {
				records[r.Record] = true
			}
		}
	}
	Expect(exprs).NotTo(BeEmpty())
	return exprs, records
}

func readDashboard(path string) map[string]any {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	var dash map[string]any
	Expect(json.Unmarshal(data, &dash)).To(Succeed(), "%s is not valid JSON", path)
	return dash
}

// allPanels returns the panels, those inside (collapsed) rows included.
func allPanels(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, item := range list {
		if p, ok := item.(map[string]any); ok {
			out = append(out, p)
			out = append(out, allPanels(p["panels"])...)
		}
	}
	return out
}

// dashboardExprs returns every PromQL expression of the dashboard's panels,
// each prefixed with its panel's title, and with variables the queries of
// its template variables too.
func dashboardExprs(dash map[string]any, variables bool) []string {
	var out []string
	for _, p := range allPanels(dash["panels"]) {
		targets, _ := p["targets"].([]any)
		for _, t := range targets {
			if expr, ok := t.(map[string]any)["expr"].(string); ok {
				out = append(out, fmt.Sprintf("panel %q: %s", p["title"], expr))
			}
		}
	}
	templating, _ := dash["templating"].(map[string]any)
	list, _ := templating["list"].([]any)
	for _, v := range list {
		if def, ok := v.(map[string]any)["definition"].(string); ok && variables {
			out = append(out, fmt.Sprintf("variable %q: %s", v.(map[string]any)["name"], def))
		}
	}
	return out
}

// grafanaVars matches Grafana's variables in an expression; grafanaValue is
// what promtool gets instead: a duration, or a regular expression for a label.
var grafanaVars = regexp.MustCompile(`\$\{?\w+\}?`)

func grafanaValue(v string) string {
	if strings.HasPrefix(v, "$__") {
		return "5m"
	}
	return ".+"
}

// series are the label sets of the exposed samples, by sample name (a
// histogram's _bucket, _sum and _count apart).
type series map[string][]map[string]string

var (
	labelPair = regexp.MustCompile(`([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
	quoted    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	metricRef = regexp.MustCompile(`(?:^|[^\w:$])((?:blacksmith[_:]|go_|process_)[\w:]*)\s*(\{[^}]*\})?`)
	grouping  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
)

// parseExposition reads Prometheus's text format.
func parseExposition(text string) series {
	GinkgoHelper()
	out := series{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, labels := line, map[string]string{}
		if i := strings.IndexByte(line, '{'); i >= 0 {
			name = line[:i]
			for _, m := range labelPair.FindAllStringSubmatch(line[i:strings.LastIndexByte(line, '}')], -1) {
				labels[m[1]] = m[3]
			}
		} else {
			name = strings.Fields(line)[0]
		}
		out[name] = append(out[name], labels)
	}
	Expect(out).To(HaveKey("blacksmith_reconciler_runs_total"))
	return out
}

// checkExpr returns the metric names expr uses and what is wrong with them:
// a name the daemon does not expose (nor a recording rule defines), a label
// no exposed series of that name has, a label value (an exact one, or each
// of a|b|c) none has, a grouping label no series has.
func checkExpr(expr string, exposed series, records map[string]bool) (names, problems []string) {
	where, body, _ := strings.Cut(expr, ": ")
	for _, m := range metricRef.FindAllStringSubmatch(quoted.ReplaceAllString(body, `""`), -1) {
		names = append(names, m[1])
		switch {
		case records[m[1]]:
		case exposed[m[1]] == nil:
			problems = append(problems, fmt.Sprintf("%s: %s is not exposed", where, m[1]))
		}
	}
	// The selectors again, on the text with its strings.
	for _, m := range metricRef.FindAllStringSubmatch(body, -1) {
		if exposed[m[1]] == nil || m[2] == "" {
			continue
		}
		for _, lm := range labelPair.FindAllStringSubmatch(m[2], -1) {
			if p := checkMatcher(m[1], lm[1], lm[2], lm[3], exposed[m[1]]); p != "" {
				problems = append(problems, where+": "+p)
			}
		}
	}
	all := allLabels(exposed)
	for _, m := range grouping.FindAllStringSubmatch(quoted.ReplaceAllString(body, `""`), -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !all[l] {
				problems = append(problems, fmt.Sprintf("%s: no exposed series has the label %s", where, l))
			}
		}
	}
	return names, problems
}

// literalAlternatives matches a regular expression that is only a|b|c.
var literalAlternatives = regexp.MustCompile(`^[\w/:-]+(\|[\w/:-]+)*$`)

// checkMatcher checks one label matcher of a selector of name.
func checkMatcher(name, label, op, value string, exposed []map[string]string) string {
	if label == "job" || label == "instance" { // added by Prometheus, not the daemon
		return ""
	}
	values := map[string]bool{}
	for _, labels := range exposed {
		if v, ok := labels[label]; ok {
			values[v] = true
		}
	}
	if len(values) == 0 {
		return fmt.Sprintf("no exposed %s has the label %s", name, label)
	}
	want := []string{value}
	if op == "=~" || op == "!~" {
		if !literalAlternatives.MatchString(value) {
			return "" // a real regular expression (5..): its values may not exist yet
		}
		want = strings.Split(value, "|")
	}
	for _, v := range want {
		if !values[v] {
			return fmt.Sprintf("no exposed %s has %s=%q", name, label, v)
		}
	}
	return ""
}

// allLabels returns every label name of the exposed series, and those
// Prometheus adds.
func allLabels(exposed series) map[string]bool {
	all := map[string]bool{"job": true, "instance": true}
	for _, list := range exposed {
		for _, labels := range list {
			for l := range labels {
				all[l] = true
			}
		}
	}
	return all
}
