package catalog_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

var _ = Describe("bad catalogs", func() {
	// In want, $D stands for the catalog directory.
	DescribeTable("name the file and the field",
		func(changes tree, want ...string) {
			dir := good.with(changes).write()
			_, err := catalog.Load(dir)
			for i := range want {
				want[i] = strings.ReplaceAll(want[i], "$D", dir)
			}
			Expect(problems(err)).To(ConsistOf(want))
		},
		Entry("unknown service field", tree{"redis/service.yml": "id: redis\nname: redis\ndescription: d\ncolour: red\n"},
			"$D/redis/service.yml: colour: unknown field"),
		Entry("missing service fields", tree{"redis/service.yml": "tags: [a]\n"},
			"$D/redis/service.yml: id: required",
			"$D/redis/service.yml: name: required",
			"$D/redis/service.yml: description: required"),
		Entry("empty service id", tree{"redis/service.yml": "id: \"\"\nname: redis\ndescription: d\n"},
			"$D/redis/service.yml: id: must not be empty"),
		Entry("service id with a space", tree{"redis/service.yml": "id: my redis\nname: redis\ndescription: d\n"},
			`$D/redis/service.yml: id: "my redis": use letters, digits, '-', '_' and '.' only`),
		Entry("service name with a space", tree{"redis/service.yml": "id: redis\nname: my redis\ndescription: d\n"},
			`$D/redis/service.yml: name: "my redis": must not contain whitespace`),
		Entry("bindable not a boolean", tree{"redis/service.yml": "id: redis\nname: redis\ndescription: d\nbindable: yes\n"},
			`$D/redis/service.yml: bindable: not a boolean (true or false): "yes"`),
		Entry("limit not an integer", tree{"redis/service.yml": "id: redis\nname: redis\ndescription: d\nlimit: lots\n"},
			`$D/redis/service.yml: limit: not an integer: "lots"`),
		Entry("maintenance_info of one plan only", tree{"redis/small/plan.yml": "id: redis-small\nname: small\ndescription: d\nmaintenance_info: {version: 1.0.0}\n"},
			`$D/redis/large/plan.yml: maintenance_info: required once any plan declares one (plan "redis-small" does)`),
		Entry("maintenance_info without a version", tree{"redis/small/plan.yml": "id: redis-small\nname: small\ndescription: d\nmaintenance_info: {description: x}\n"},
			"$D/redis/small/plan.yml: maintenance_info: version is required (a semantic version, e.g. 1.0.0)"),
		Entry("maintenance_info with a version that is no semver", tree{"redis/small/plan.yml": "id: redis-small\nname: small\ndescription: d\nmaintenance_info: {version: 1.2}\n"},
			`$D/redis/small/plan.yml: maintenance_info: version "1.2" is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.2.0; semver.org)`),
		Entry("maintenance_info with a leading zero", tree{"redis/small/plan.yml": "id: redis-small\nname: small\ndescription: d\nmaintenance_info: {version: 1.02.0}\n"},
			`$D/redis/small/plan.yml: maintenance_info: version "1.02.0" is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.2.0; semver.org)`),
		Entry("maintenance_info with an unknown field", tree{"redis/small/plan.yml": "id: redis-small\nname: small\ndescription: d\nmaintenance_info: {version: 1.0.0, private: x}\n"},
			`$D/redis/small/plan.yml: maintenance_info: unknown field "private" (version and description are known)`),
		Entry("maintenance_info a string", tree{"redis/small/plan.yml": "id: redis-small\nname: small\ndescription: d\nmaintenance_info: 1.0.0\n"},
			"$D/redis/small/plan.yml: maintenance_info: expected a mapping of version and description"),
		Entry("negative limit", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nlimit: -1\n"},
			"$D/redis/large/plan.yml: limit: must not be negative (0 = unlimited), got -1"),
		Entry("bindings neither shared nor per_binding", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nbindings: each\n"},
			`$D/redis/large/plan.yml: bindings: must be shared or per_binding, got "each"`),
		Entry("negative max_bindings", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nmax_bindings: -2\n"},
			"$D/redis/large/plan.yml: max_bindings: must not be negative (0 = unlimited), got -2"),
		Entry("negative maximum_polling_duration", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nmaximum_polling_duration: -5\n"},
			"$D/redis/large/plan.yml: maximum_polling_duration: must be 0 (the platform's own) or 60 to 604800 seconds (a minute to a week), got -5"),
		Entry("maximum_polling_duration over a week", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nmaximum_polling_duration: 604801\n"},
			"$D/redis/large/plan.yml: maximum_polling_duration: must be 0 (the platform's own) or 60 to 604800 seconds (a minute to a week), got 604801"),
		Entry("maximum_polling_duration under a minute", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nmaximum_polling_duration: 59\n"},
			"$D/redis/large/plan.yml: maximum_polling_duration: must be 0 (the platform's own) or 60 to 604800 seconds (a minute to a week), got 59"),
		Entry("polling_interval 0", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\npolling_interval: 0\n"},
			"$D/redis/large/plan.yml: polling_interval: must be 1 to 3600 seconds, got 0"),
		Entry("polling_interval over an hour", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\npolling_interval: 3601\n"},
			"$D/redis/large/plan.yml: polling_interval: must be 1 to 3600 seconds, got 3601"),
		Entry("polling_interval not under maximum_polling_duration", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nmaximum_polling_duration: 600\npolling_interval: 600\n"},
			"$D/redis/large/plan.yml: polling_interval: must be less than maximum_polling_duration (600), got 600"),
		Entry("polling_interval not an integer", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\npolling_interval: 1m\n"},
			`$D/redis/large/plan.yml: polling_interval: not an integer: "1m"`),
		Entry("lifecycle_errands with an unknown step", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nlifecycle_errands: {pre_deploy: [cleanup]}\n"},
			`$D/redis/large/plan.yml: lifecycle_errands: unknown step "pre_deploy" (post_deploy and pre_delete are known)`),
		Entry("lifecycle_errands naming one twice", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nlifecycle_errands: {post_deploy: [smoke, smoke]}\n"},
			`$D/redis/large/plan.yml: lifecycle_errands: post_deploy names "smoke" twice`),
		Entry("lifecycle_errands naming a path", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nlifecycle_errands: {post_deploy: [../x]}\n"},
			`$D/redis/large/plan.yml: lifecycle_errands: post_deploy names "../x", not an errand name (letters, digits, '_', '.', '-')`),
		Entry("lifecycle_errands a list", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nlifecycle_errands: [smoke]\n"},
			"$D/redis/large/plan.yml: lifecycle_errands: must be a mapping: {post_deploy: [errand names], pre_delete: [errand names]}"),
		Entry("shareable not a bool", tree{"redis/service.yml": "id: redis\nname: redis\ndescription: d\nshareable: sometimes\n"},
			`$D/redis/service.yml: shareable: not a boolean (true or false): "sometimes"`),
		Entry("max_bindings not an integer", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nmax_bindings: few\n"},
			`$D/redis/large/plan.yml: max_bindings: not an integer: "few"`),
		Entry("tags not a list", tree{"redis/service.yml": "id: redis\nname: redis\ndescription: d\ntags: redis\n"},
			"$D/redis/service.yml: tags: expected a list"),
		Entry("description a mapping", tree{"redis/service.yml": "id: redis\nname: redis\ndescription: {a: b}\n"},
			"$D/redis/service.yml: description: expected a single value"),
		Entry("field given twice", tree{"redis/service.yml": "id: redis\nid: redis2\nname: redis\ndescription: d\n"},
			"$D/redis/service.yml: id: given more than once"),
		Entry("field given twice, the first badly", tree{"redis/service.yml": "id: redis\nname: redis\ndescription: d\nlimit: x\nlimit: 3\n"},
			`$D/redis/service.yml: limit: not an integer: "x"`,
			"$D/redis/service.yml: limit: given more than once"),
		Entry("field given twice, the first null", tree{"redis/service.yml": "id: redis\nname: redis\ndescription: d\ntags:\ntags: [a]\n"},
			"$D/redis/service.yml: tags: given more than once"),
		Entry("service.yml not YAML", tree{"redis/service.yml": "id: [redis\n"},
			"$D/redis/service.yml: yaml: line 1: did not find expected ',' or ']'"),
		Entry("service.yml a list", tree{"redis/service.yml": "- id\n"},
			"$D/redis/service.yml: expected a mapping of fields"),
		Entry("service.yml empty", tree{"redis/service.yml": "# nothing\n"},
			"$D/redis/service.yml: is empty"),
		Entry("service.yml missing", tree{"redis/service.yml": ""},
			"$D/redis/service.yml: missing"),
		Entry("service without plans", tree{"redis/small/plan.yml": "", "redis/small/manifest.yml": "", "redis/small/credentials.yml": "",
			"redis/large/plan.yml": "", "redis/large/manifest.yml": ""},
			"$D/redis: has no plan directories"),
		Entry("plan.yml missing", tree{"redis/large/plan.yml": ""},
			"$D/redis/large/plan.yml: missing"),
		Entry("unknown plan field", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nfree: true\n"},
			"$D/redis/large/plan.yml: free: unknown field"),
		Entry("updatable not a boolean", tree{"redis/large/plan.yml": "id: redis-large\nname: large\ndescription: d\nupdatable: 1\n"},
			`$D/redis/large/plan.yml: updatable: not a boolean (true or false): "1"`),
		Entry("manifest missing", tree{"redis/large/manifest.yml": ""},
			"$D/redis/large/manifest.yml: missing"),
		Entry("manifest blank", tree{"redis/large/manifest.yml": "\n  \n"},
			"$D/redis/large/manifest.yml: is empty"),
		Entry("manifest not a template", tree{"redis/large/manifest.yml": "name: {{ .DeploymentName \n"},
			"$D/redis/large/manifest.yml: not a valid template: template: manifest.yml:2: unclosed action started at manifest.yml:1"),
		Entry("credentials not a template", tree{"redis/small/credentials.yml": "host: {{ end }}\n"},
			"$D/redis/small/credentials.yml: not a valid template: template: credentials.yml:1: unexpected {{end}}"),
		Entry("duplicate plan id", tree{"redis/large/plan.yml": "id: redis-small\nname: large\ndescription: d\n"},
			"$D/redis/small/plan.yml: id: plan id \"redis-small\" is already used in $D/redis/large/plan.yml"),
		Entry("duplicate plan name", tree{"redis/large/plan.yml": "id: redis-large\nname: small\ndescription: d\n"},
			"$D/redis/small/plan.yml: name: plan name \"small\" is already used in $D/redis/large/plan.yml"),
		Entry("duplicate service id", tree{
			"cache/service.yml": "id: redis\nname: cache\ndescription: d\n", "cache/p/plan.yml": "id: cache-p\nname: p\ndescription: d\n",
			"cache/p/manifest.yml": manifest},
			"$D/redis/service.yml: id: service id \"redis\" is already used in $D/cache/service.yml"),
		Entry("every problem at once", tree{
			"redis/service.yml":        "id: redis\nname: redis\n",
			"redis/large/plan.yml":     "id: redis-large\nname: large\ndescription: d\nlimit: x\n",
			"redis/small/manifest.yml": ""},
			"$D/redis/service.yml: description: required",
			"$D/redis/large/plan.yml: limit: not an integer: \"x\"",
			"$D/redis/small/manifest.yml: missing"),
	)

	It("reports a service id used in two directories", func() {
		a, b := good.write(), good.write()
		_, err := catalog.Load(a, b)
		Expect(problems(err)).To(ContainElements(
			b+`/redis/service.yml: id: service id "redis" is already used in `+a+`/redis/service.yml`,
			b+`/redis/small/plan.yml: id: plan id "redis-small" is already used in `+a+`/redis/small/plan.yml`,
		))
	})

	It("names a directory that does not exist", func() {
		dir := filepath.Join(GinkgoT().TempDir(), "absent")
		_, err := catalog.Load(dir)
		Expect(problems(err)).To(ConsistOf(dir + ": missing"))
		Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue())
	})

	It("names a catalog path that is a file", func() {
		file := filepath.Join(GinkgoT().TempDir(), "catalog")
		Expect(os.WriteFile(file, []byte("x"), 0o644)).To(Succeed())
		_, err := catalog.Load(file)
		Expect(problems(err)).To(ConsistOf(file + ": not a directory"))
	})
})
