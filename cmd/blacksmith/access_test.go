package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/cf"
)

// parseAccess parses register-broker's access flags.
func parseAccess(args ...string) (*accessRules, error) {
	var a accessRules
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a.flags(fs)
	return &a, fs.Parse(args)
}

func TestAccessRules(t *testing.T) {
	a, err := parseAccess("--access", "p1=none", "--org", "p2=b", "--org", "p2=a", "--org", "p2=a", "--default-access", "keep")
	if err != nil {
		t.Fatal(err)
	}
	orgs := map[string]string{"a": "ga", "b": "gb"}
	for plan, want := range map[string]cf.Visibility{
		"p1": {Type: cf.VisibilityAdmin},
		"p2": {Type: cf.VisibilityOrganization, Orgs: []cf.Org{{GUID: "ga", Name: "a"}, {GUID: "gb", Name: "b"}}},
	} {
		got, set, err := a.want(plan, orgs)
		if err != nil || !set || !got.Equal(want) || len(got.Orgs) != len(want.Orgs) {
			t.Errorf("%s: %+v %v %v, want %+v", plan, got, set, err, want)
		}
	}
	if _, set, _ := a.want("p3", orgs); set {
		t.Error("keep set a plan without a rule")
	}
	if _, _, err := a.want("p2", map[string]string{"a": "ga"}); err == nil || !strings.Contains(err.Error(), `organization "b"`) {
		t.Errorf("a missing org: %v", err)
	}
	if err := a.check([]string{"p1"}); err == nil || !strings.Contains(err.Error(), `plan "p2"`) {
		t.Errorf("a plan the catalog lacks: %v", err)
	}
}

func TestAccessFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--access", "p1=some"}, {"--access", "=all"}, {"--access", "p1=all", "--access", "p1=none"},
		{"--access", "p1=all", "--org", "p1=o"}, {"--org", "p1=a,b"}, {"--org", "p1="}, {"--default-access", "everyone"},
	} {
		if _, err := parseAccess(args...); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
