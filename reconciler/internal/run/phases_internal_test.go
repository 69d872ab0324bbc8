package run

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// normalized is text with comment markers, table and box borders and line
// breaks taken out, its spaces collapsed: a list written across lines reads
// as one.
func normalized(text string) string {
	text = strings.NewReplacer("//", " ", "|", " ", "\t", " ").Replace(text)
	return regexp.MustCompile(`\s+`).ReplaceAllString(text, " ")
}

// The docs that describe a run list its phases as phases does, in order, so
// that a phase added (or moved) without its docs fails here.
func TestTheDocsListTheRunsPhases(t *testing.T) {
	want := strings.Join(PhaseNames(), ", ")
	if len(PhaseNames()) < 10 {
		t.Fatalf("phases: %v", PhaseNames())
	}
	for _, doc := range []string{"doc.go", "../../../docs/design.md", "../../../docs/architecture.md"} {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(normalized(string(raw)), want) {
			t.Errorf("%s does not list the run's phases as run.go's phases do: %q", doc, want)
		}
	}
}
