package main

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The subcommands `blacksmith help` lists are the ones docs/architecture.md's package
// table, docs/design.md and this command's package comment name, and each runs (none
// is unknown).
func TestSubcommandsListedAlike(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"help"}, &out, &out, func(string) (string, bool) { return "", false }); code != exitOK {
		t.Fatalf("help exited %d", code)
	}
	var help []string
	for _, m := range regexp.MustCompile(`(?m)^  blacksmith (?:\[)?([a-z-]+)`).FindAllStringSubmatch(out.String(), -1) {
		help = append(help, m[1])
	}
	if len(help) < 7 {
		t.Fatalf("help lists %v", help)
	}
	for _, name := range help {
		var errOut bytes.Buffer
		run([]string{name, "--no-such-flag"}, &errOut, &errOut, func(string) (string, bool) { return "", false })
		if strings.Contains(errOut.String(), "unknown command") {
			t.Errorf("help lists %q, which is an unknown command", name)
		}
	}
	for _, doc := range []string{"../../docs/architecture.md", "../../docs/design.md"} {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		line := regexp.MustCompile(`(?m)^.*\bsubcommands\b.*(?:\n[^|\n#]+)?`).FindString(text)
		var listed []string
		for _, name := range help {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(line) {
				listed = append(listed, name)
			}
		}
		if !slices.Equal(listed, help) {
			t.Errorf("%s lists the subcommands %v in %q; blacksmith help lists %v", doc, listed, line, help)
		}
	}
	raw, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	comment, _, _ := strings.Cut(string(raw), "package main")
	var named []string
	for _, m := range regexp.MustCompile(`(?m)^//\s+blacksmith (?:\[)?([a-z-]+)`).FindAllStringSubmatch(comment, -1) {
		named = append(named, m[1])
	}
	if !slices.Equal(named, help) {
		t.Errorf("the package comment names the subcommands %v; blacksmith help lists %v", named, help)
	}
}
