package match

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// blacksmithHead starts a manifest whose properties.blacksmith parameters follow.
const blacksmithHead = "name: x\nproperties:\n  blacksmith:\n    instance_id: i\n    plan_id: p\n    parameters:\n"

// hostile are manifests of every shape a Director could answer (up to its
// 16 MiB cap), and whether the reconciler reads (true) or refuses them.
func hostile() []struct {
	name   string
	text   string
	parsed bool
} {
	keys := func(n int) string {
		var b strings.Builder
		b.WriteString(blacksmithHead)
		for i := 0; i < n || (n == 0 && b.Len() < 16<<20); i++ {
			fmt.Fprintf(&b, "      k%d: v\n", i)
		}
		return b.String()
	}
	var bomb strings.Builder
	bomb.WriteString(blacksmithHead + "      a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&bomb, "      a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	var deep strings.Builder
	deep.WriteString("name: x\n")
	for i := 0; i < 900; i++ {
		deep.WriteString(strings.Repeat("  ", i) + "k:\n")
	}
	return []struct {
		name   string
		text   string
		parsed bool
	}{
		{"45,000 parameter keys (under the bound; 99,000 took 45 s before it)", keys(45000), true},
		{"16 MiB of parameter keys", keys(0), false},
		{"an 8 MiB value", blacksmithHead + "      k: " + strings.Repeat("x", 8<<20-200) + "\n", true},
		{"16 MiB of one value", blacksmithHead + "      k: " + strings.Repeat("x", 16<<20) + "\n", false},
		{"16 MiB of [ nested", "x: " + strings.Repeat("[", 16<<20), false},
		{"16 MiB of one flow sequence", "x: [" + strings.Repeat("1,", 8<<20) + "]", false},
		{"an alias bomb in the parameters", bomb.String(), false},
		{"block nesting 900 deep", deep.String(), true},
	}
}

var _ = Describe("a manifest a Director answers", func() {
	It("is read or refused, whatever its shape, allocating under 64 MB", func() {
		for _, h := range hostile() {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			m, err := Parse(h.text)
			runtime.ReadMemStats(&after)
			if h.parsed {
				Expect(err).NotTo(HaveOccurred(), h.name)
				Expect(m.Name).To(Equal("x"), h.name)
			} else {
				Expect(err).To(MatchError(ErrManifestBounds), h.name)
			}
			Expect(after.TotalAlloc-before.TotalAlloc).To(BeNumerically("<", 64<<20), h.name)
			_, err = RecordInfo(h.text, func() (*Manifest, error) { return Parse(h.text) })
			Expect(err == nil).To(Equal(h.parsed), h.name)
		}
	})

	It("keeps the parameters the YAML package would have decoded, and refuses a key written twice", func() {
		m, err := Parse(blacksmithHead + "      size: 3\n      tags: [a, b]\n      nested: {x: 1.5, y: null}\n      1: one\n")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Blacksmith().Parameters).To(Equal(map[any]any{"size": 3, "tags": []any{"a", "b"},
			"nested": map[string]any{"x": 1.5, "y": nil}, 1: "one"}))
		m, err = Parse(blacksmithHead + "      size: 3\n      plan: big\n")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Blacksmith().Parameters).To(Equal(map[string]any{"size": 3, "plan": "big"}))
		_, err = Parse(blacksmithHead + "      size: 3\n      size: 4\n")
		Expect(err).To(MatchError(ContainSubstring("already defined")))
	})
})

// FuzzParseBounded: any manifest is parsed or refused within a time budget
// (a generous one: make fuzz runs on a busy machine).
func FuzzParseBounded(f *testing.F) {
	f.Add(blacksmithHead + "      a: &a [x, x]\n      b: [*a, *a]\n")
	f.Add("x: [[[[{a: [1, {b: 2}]}]]]]\n")
	f.Add(strings.Repeat("k: v\n", 1000))
	f.Fuzz(func(t *testing.T, text string) {
		start := time.Now()
		_, _ = Parse(text)
		_, _ = RecordInfo(text, func() (*Manifest, error) { return Parse(text) })
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%d bytes took %s", len(text), d)
		}
	})
}

// BenchmarkParseHostile measures the hostile shapes (make bench runs it).
func BenchmarkParseHostile(b *testing.B) {
	for i, h := range hostile() {
		b.Run(fmt.Sprintf("shape%d-%dB", i, len(h.text)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = Parse(h.text)
			}
		})
	}
}
