package match

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// blacksmithHead starts a manifest whose properties.blacksmith parameters follow.
const blacksmithHead = "name: x\nproperties:\n  blacksmith:\n    instance_id: i\n    plan_id: p\n    parameters:\n"

// Outcomes of reading a hostile manifest.
const (
	read    = iota // parsed
	bounded        // refused: past the bounds
	invalid        // refused: not a manifest (a key twice)
)

// hostile are manifests of every shape a Director could answer (up to its
// 16 MiB cap), and whether the reconciler reads or refuses them.
func hostile() []struct {
	name    string
	text    string
	outcome int
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
	var merges strings.Builder // each mapping merges the one before twice: 2^40 keys to visit
	merges.WriteString("m0: &m0 {name: x}\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&merges, "m%d: &m%d {<<: [*m%d, *m%d]}\n", i, i, i-1, i-1)
	}
	merges.WriteString("<<: *m40\n")
	var topKeys strings.Builder
	topKeys.WriteString("name: x\n")
	for i := range 45000 {
		fmt.Fprintf(&topKeys, "k%d: v\n", i)
	}
	return []struct {
		name    string
		text    string
		outcome int
	}{
		{"45,000 parameter keys (under the bound; 99,000 took 45 s before it)", keys(45000), read},
		{"16 MiB of parameter keys", keys(0), bounded},
		{"an 8 MiB value", blacksmithHead + "      k: " + strings.Repeat("x", 8<<20-200) + "\n", read},
		{"16 MiB of one value", blacksmithHead + "      k: " + strings.Repeat("x", 16<<20) + "\n", bounded},
		{"16 MiB of [ nested", "x: " + strings.Repeat("[", 16<<20), bounded},
		{"16 MiB of one flow sequence", "x: [" + strings.Repeat("1,", 8<<20) + "]", bounded},
		{"an alias bomb in the parameters", bomb.String(), bounded},
		{"block nesting 900 deep", deep.String(), read},
		{"45,000 top-level keys", topKeys.String(), read},
		{"one top-level key 45,000 times (4,000 took 12 s before)", "name: x\n" + strings.Repeat("k: v\n", 45000), invalid},
		{"one parameter key 45,000 times", blacksmithHead + strings.Repeat("      k: v\n", 45000), invalid},
		{"one properties.blacksmith key 45,000 times", "name: x\nproperties:\n  blacksmith:\n" + strings.Repeat("    k: v\n", 45000), invalid},
		{"one key 45,000 times where nothing is read (as the YAML package: ignored)", "name: x\nother:\n" + strings.Repeat("  k: v\n", 45000), read},
		{"merge keys doubling 40 times", merges.String(), bounded},
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
			switch h.outcome {
			case read:
				Expect(err).NotTo(HaveOccurred(), h.name)
				Expect(m.Name).To(Equal("x"), h.name)
			case bounded:
				Expect(err).To(MatchError(ErrManifestBounds), h.name)
			case invalid:
				Expect(err).To(MatchError(ContainSubstring("already defined")), h.name)
			}
			Expect(after.TotalAlloc-before.TotalAlloc).To(BeNumerically("<", 64<<20), h.name)
			_, err = RecordInfo(h.text, func() (*Manifest, error) { return Parse(h.text) })
			switch h.outcome { // invalid: the records read only the top-level stemcells and properties when they can
			case read:
				Expect(err).NotTo(HaveOccurred(), h.name)
			case bounded:
				Expect(err).To(MatchError(ErrManifestBounds), h.name)
			}
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
	f.Add("properties:\n  blacksmith:\n" + strings.Repeat("    k: v\n", 1000))
	f.Add("m0: &m0 {a: 1}\nm1: &m1 {<<: [*m0, *m0]}\nm2: &m2 {<<: [*m1, *m1]}\n<<: *m2\n")
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

var _ = Describe("a manifest's key quoted in an error", func() {
	It("is its first bytes: a key of half a megabyte written twice makes an error of a line", func() {
		key := strconv.Quote(strings.Repeat("\u0085<k>", 128<<10)) // a YAML double-quoted scalar
		for name, text := range map[string]string{
			"top level":  "name: x\n? " + key + "\n: 1\n? " + key + "\n: 2\n",
			"parameters": blacksmithHead + "      ? " + key + "\n      : 1\n      ? " + key + "\n      : 2\n",
		} {
			_, err := Parse(text)
			Expect(err).To(HaveOccurred(), name)
			Expect(err.Error()).To(ContainSubstring("already defined"), name)
			Expect(len(err.Error())).To(BeNumerically("<", 400), name)
		}
	})
})
