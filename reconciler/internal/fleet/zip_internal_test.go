package fleet

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cloudfoundry-community/gogobosh"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// manifestOf is a manifest like the simulator's, of a plan and an instance.
func manifestOf(plan, id string) string {
	return "---\nname: " + plan + "-" + id + "\nreleases:\n- name: postgres\n  version: \"48\"\nstemcells:\n- alias: default\n" +
		"  os: ubuntu-jammy\n  version: \"1.506\"\ninstance_groups:\n- name: postgres\n  instances: 1\n  azs: [z1, z2, z3]\n" +
		"  jobs:\n  - name: postgres\n    release: postgres\n    properties:\n      postgres:\n        password: ((postgres_password))\n" +
		"  vm_type: small\n  persistent_disk_type: default\n  stemcell: default\n  networks:\n  - name: services\n" +
		"update:\n  canaries: 1\n  max_in_flight: 1\n  canary_watch_time: 30000-240000\n  update_watch_time: 30000-240000\n" +
		"properties:\n  blacksmith:\n    service_id: postgresql\n    plan_id: " + plan + "\n    instance_id: " + id + "\n"
}

func deploymentOf(releases ...string) bosh.Deployment {
	d := bosh.Deployment{Name: "d"}
	for _, r := range releases {
		d.Releases = append(d.Releases, gogobosh.Resource{Name: r, Version: "1"})
	}
	return d
}

var _ = Describe("the compressed manifests", func() {
	It("inflates exactly what it deflated, with or without a dictionary, an empty text and a long one too", func() {
		long := strings.Repeat("releases: [{name: redis, version: latest}]\n", 5000)
		for _, dict := range []*dictionary{nil, {text: []byte(manifestOf("small", "a"))}, {text: []byte(long[:maxDictionary])}, {text: []byte{}}} {
			for _, text := range []string{"", "name: x\n", manifestOf("small", "b"), long} {
				back, err := inflate(deflate(text, dict))
				Expect(err).NotTo(HaveOccurred())
				Expect(back).To(Equal(text))
			}
		}
		_, err := inflate(zipped{data: []byte("not deflate data \xff\xfe")})
		Expect(err).To(HaveOccurred())
	})

	It("compresses a manifest against the first one of the same releases to a fraction of its size alone", func() {
		var ds dictionaries
		first := manifestOf("small", "1505b42b-cd2c-45c2-8dee-6618363c42c9")
		dict, forVMs := ds.of(deploymentOf("postgres"), first, nil)
		Expect(dict).NotTo(BeNil())
		Expect(forVMs).To(BeNil(), "none without VMs")
		Expect(string(dict.text)).To(Equal(first))
		again, _ := ds.of(deploymentOf("postgres"), "another text", nil)
		Expect(again).To(BeIdenticalTo(dict), "the first manifest stays the dictionary")

		text := manifestOf("small", "2618b51c-2b72-4cfe-b21d-f3c061f90f15")
		alone, against := deflate(text, nil), deflate(text, dict)
		Expect(len(against.data)).To(BeNumerically("<", len(alone.data)/3))
		back, err := inflate(against)
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(text))

		other, _ := ds.of(deploymentOf("redis"), manifestOf("large", "c"), nil)
		Expect(other).NotTo(BeNil())
		Expect(other).NotTo(BeIdenticalTo(dict), "other releases, another dictionary")
	})

	It("makes the VM lists' dictionary of the first one fetched, even after the manifests' one", func() {
		var ds dictionaries
		d := deploymentOf("postgres")
		_, none := ds.of(d, manifestOf("small", "a"), nil)
		Expect(none).To(BeNil())
		_, none = ds.of(d, manifestOf("small", "a"), []byte("[]"))
		Expect(none).To(BeNil(), "no VMs yet: too short to be a dictionary, the next list is one")
		long := deploymentOf(strings.Repeat("r", maxDictionaryKey))
		m, none := ds.of(long, manifestOf("small", "a"), nil)
		Expect(m).To(BeNil(), "release names too long for a key: none")
		Expect(none).To(BeNil())
		vms := []byte(`[{"i":"2f6c3c44-7a4e-4bfe-8d7b-5b1b3a0e1c11","j":"postgres","n":0,"z":"z1","p":["10.0.1.4"]}]`)
		m, v := ds.of(d, manifestOf("small", "b"), vms)
		Expect(v).NotTo(BeNil())
		Expect(v.text).To(Equal(vms))
		Expect(string(m.text)).To(Equal(manifestOf("small", "a")))
		_, again := ds.of(d, "", []byte("[]"))
		Expect(again).To(BeIdenticalTo(v))

		next := []byte(`[{"i":"9a0d1e2f-3b4c-4d5e-8f60-718293a4b5c6","j":"postgres","n":0,"z":"z2","p":["10.0.1.5"]}]`)
		alone, against := deflate(string(next), nil), deflate(string(next), v)
		Expect(len(against.data)).To(BeNumerically("<", len(alone.data)))
		back, err := inflate(against)
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(string(next)))
	})

	It("keeps at most maxDictionaries dictionaries of at most maxDictionary bytes", func() {
		var ds dictionaries
		big := strings.Repeat("x", 2*maxDictionary)
		for i := range maxDictionaries {
			dict, forVMs := ds.of(deploymentOf("r", strings.Repeat("s", i)), big, []byte(big))
			Expect(dict).NotTo(BeNil())
			Expect(dict.text).To(HaveLen(maxDictionary))
			Expect(forVMs.text).To(HaveLen(maxDictionary))
		}
		dict, forVMs := ds.of(deploymentOf("one-more"), big, []byte(big))
		Expect(dict).To(BeNil())
		Expect(forVMs).To(BeNil())
		dict, _ = ds.of(deploymentOf("r", ""), big, nil)
		Expect(dict).NotTo(BeNil(), "a known one is still given")
		back, err := inflate(deflate(big, nil))
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(big))
	})

	It("inflates what it deflated for random texts against random dictionaries", func() {
		r := rand.New(rand.NewPCG(7, 11))
		word := func() string {
			return []string{"name", ": ", "\n", "- ", "redis", "((x))", "1.2", "\xff", "zone"}[r.IntN(9)]
		}
		text := func(n int) string {
			var b strings.Builder
			for range n {
				b.WriteString(word())
				if r.IntN(4) == 0 {
					b.WriteByte(byte(r.IntN(256)))
				}
			}
			return b.String()
		}
		for range 300 {
			dict := &dictionary{text: []byte(text(r.IntN(3000)))}
			want := text(r.IntN(3000))
			back, err := inflate(deflate(want, dict))
			Expect(err).NotTo(HaveOccurred())
			Expect(back).To(Equal(want))
		}
	})
})

// Inflating a short text allocates about its size, not io.Copy's 32 KiB
// buffer: a run that digests every cached copy inflates each one's VMs.
func TestInflateAllocatesLittle(t *testing.T) {
	dict := &dictionary{text: []byte(manifestOf("small", "a"))}
	z := deflate(manifestOf("small", "b"), dict)
	if _, err := inflate(z); err != nil { // a reader in the pool
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 200
	for range n {
		if _, err := inflate(z); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// The bound is under io.Copy's buffer alone, and over what the race
	// detector costs: with -race, sync.Pool drops a share of what is put
	// back, and a reader (~40 KiB) is made anew now and then.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 24<<10 {
		t.Fatalf("inflate allocates %d bytes a call for a text of %d", per, len(manifestOf("small", "b")))
	}
}

// FuzzDeflate holds deflate and inflate to each other, with and without a
// dictionary.
func FuzzDeflate(f *testing.F) {
	f.Add([]byte(manifestOf("small", "a")), manifestOf("small", "b"))
	f.Add([]byte{}, "")
	f.Add([]byte("x"), strings.Repeat("x", 300))
	f.Fuzz(func(t *testing.T, dict []byte, text string) {
		for _, d := range []*dictionary{nil, {text: dict[:min(len(dict), maxDictionary)]}} {
			back, err := inflate(deflate(text, d))
			if err != nil || back != text {
				t.Fatalf("deflate/inflate: %v, %d bytes back of %d", err, len(back), len(text))
			}
		}
	})
}
