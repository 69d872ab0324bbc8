package config_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

var _ = Describe("values that do not parse", func() {
	bad := map[string]struct{ value, message string }{
		"time.Duration": {"abc", `invalid duration "abc"`},
		"int":           {"x", `not an integer: "x"`},
		"float64":       {"fast", `not a number: "fast"`},
	}
	for _, o := range options {
		b, ok := bad[typeName(o.def)]
		if !ok {
			continue
		}
		It("names "+o.key+" in the file", func() {
			_, err := config.Load(confFile(nested(o.key, b.value)), envOf(requiredEnv()))
			Expect(problems(err)).To(ConsistOf(o.key + ": " + b.message))
		})
		It("names "+o.env+" in the environment", func() {
			_, err := config.Load("", envOf(with(requiredEnv(), map[string]string{o.env: b.value})))
			Expect(problems(err)).To(ConsistOf(o.env + ": " + b.message))
		})
	}

	It("rejects a number without a unit as a duration", func() {
		_, err := config.Load(confFile("reconciler:\n  interval: 30\n"), envOf(requiredEnv()))
		Expect(problems(err)).To(ConsistOf(`reconciler.interval: invalid duration "30"`))
	})

	It("rejects a fraction as an integer", func() {
		_, err := config.Load(confFile("reconciler:\n  batch_size: 2.5\n"), envOf(requiredEnv()))
		Expect(problems(err)).To(ConsistOf(`reconciler.batch_size: not an integer: "2.5"`))
	})
})

func typeName(v any) string {
	switch v.(type) {
	case time.Duration:
		return "time.Duration"
	case int:
		return "int"
	case float64:
		return "float64"
	}
	return ""
}

var _ = Describe("the shape of the file", func() {
	load := func(text string) []string {
		GinkgoHelper()
		_, err := config.Load(confFile(text), envOf(requiredEnv()))
		return problems(err)
	}

	It("rejects every unknown key at once, by its full dotted path", func() {
		Expect(load(`
colour: blue
broker:
  usrname: admin
reconciler:
  backup:
    retenion: 3
  rules:
    - patern: "x"
`)).To(Equal([]string{
			"colour: unknown key",
			"broker.usrname: unknown key",
			"reconciler.backup.retenion: unknown key",
			"reconciler.rules[0].patern: unknown key",
			"reconciler.rules[0].pattern: required",
		}))
	})

	It("names a key given twice", func() {
		Expect(load("reconciler:\n  interval: 1m\n  interval: 2m\n")).To(ConsistOf(
			"reconciler.interval: given more than once (first on line 2)"))
	})

	It("names a section that is not a mapping", func() {
		Expect(load("broker: [a, b]\n")).To(ConsistOf("broker: expected a mapping, got a list"))
	})

	It("names a list that is not a list", func() {
		Expect(load("catalog:\n  dirs: /srv/catalog\n")).To(ConsistOf(`catalog.dirs: expected a list, got "/srv/catalog"`))
	})

	It("names a value that is a mapping", func() {
		Expect(load("vault:\n  token: {a: b}\n")).To(ConsistOf("vault.token: expected a single value, got a mapping"))
	})

	It("names a null in a list", func() {
		Expect(load("catalog:\n  dirs: [~]\n")).To(ConsistOf("catalog.dirs[0]: expected a value, got null"))
	})

	It("names a release without a service id", func() {
		Expect(load("reconciler:\n  releases:\n    redis:\n")).To(ConsistOf(
			"reconciler.releases.redis: expected a single value, got null"))
	})

	It("keeps defaults for keys and sections left empty", func() {
		c, err := config.Load(confFile("reconciler:\n  interval:\nmetrics:\n"), envOf(requiredEnv()))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Reconciler.Interval).To(Equal(time.Hour))
		Expect(c.Metrics.Enabled).To(BeTrue())
	})

	It("follows YAML anchors", func() {
		c, err := config.Load(confFile("reconciler:\n  retry_delay: &d 20s\n  cache_ttl: *d\n"), envOf(requiredEnv()))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Reconciler.CacheTTL).To(Equal(20 * time.Second))
	})

	It("reads an empty file as defaults", func() {
		c, err := config.Load(confFile("# nothing here\n"), envOf(requiredEnv()))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Reconciler.BatchSize).To(Equal(10))
	})

	It("rejects a top level that is not a mapping, naming the file", func() {
		path := confFile("- a\n- b\n")
		_, err := config.Load(path, envOf(requiredEnv()))
		Expect(problems(err)).To(ConsistOf(path + ": expected a mapping of sections at the top, got a list"))
	})

	It("rejects a YAML syntax error, naming the file and the line", func() {
		path := confFile("broker:\n  username: [unclosed\n")
		_, err := config.Load(path, envOf(requiredEnv()))
		Expect(problems(err)).To(ConsistOf(And(HavePrefix(path+": "), ContainSubstring("line"))))
	})

	It("rejects a second YAML document", func() {
		path := confFile("debug: true\n---\ndebug: false\n")
		_, err := config.Load(path, envOf(requiredEnv()))
		Expect(problems(err)).To(ConsistOf(path + ": holds more than one YAML document"))
	})
})

var _ = Describe("the file itself", func() {
	It("is an error naming the path when missing", func() {
		path := filepath.Join(GinkgoT().TempDir(), "absent.conf")
		_, err := config.Load(path, envOf(requiredEnv()))
		Expect(problems(err)).To(ConsistOf(path + ": cannot read: no such file or directory"))
		Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue())
	})

	It("is an error naming the path when unreadable", func() {
		path := GinkgoT().TempDir() // a directory cannot be read as a file
		_, err := config.Load(path, envOf(requiredEnv()))
		Expect(problems(err)).To(ConsistOf(HavePrefix(path + ": cannot read: ")))
	})

	It("is an error naming the path when permissions forbid reading it", func() {
		if os.Geteuid() == 0 {
			Skip("root reads files whatever their mode")
		}
		path := confFile("debug: true\n")
		Expect(os.Chmod(path, 0)).To(Succeed())
		_, err := config.Load(path, envOf(requiredEnv()))
		Expect(problems(err)).To(ConsistOf(path + ": cannot read: permission denied"))
	})
})

var _ = Describe("every problem at once", func() {
	It("reports file, environment and validation problems together", func() {
		path := confFile(`
broker:
  username: admin
  bogus: 1
reconciler:
  interval: abc
  max_concurrency: 0
  backup:
    retention: -1
`)
		_, err := config.Load(path, envOf(map[string]string{
			"BLACKSMITH_RECONCILER_BATCH_SIZE": "x",
			"BLACKSMITH_RECONCILER_CACHE_TTL":  "0s",
		}))
		Expect(problems(err)).To(ConsistOf(
			"broker.bogus: unknown key",
			`reconciler.interval: invalid duration "abc"`,
			`BLACKSMITH_RECONCILER_BATCH_SIZE: not an integer: "x"`,
			"broker.password: required (set it in the file or with BLACKSMITH_BROKER_PASSWORD)",
			"operator.admin.username: required (set it in the file or with BLACKSMITH_OPERATOR_ADMIN_USERNAME)",
			"operator.admin.password: required (set it in the file or with BLACKSMITH_OPERATOR_ADMIN_PASSWORD)",
			"vault.address: required (set it in the file or with VAULT_ADDR)",
			"bosh.address: required (set it in the file or with BOSH_ENVIRONMENT)",
			"reconciler.max_concurrency: must be at least 1, got 0",
			"reconciler.cache_ttl: must be a positive duration, got 0s (set by BLACKSMITH_RECONCILER_CACHE_TTL)",
			"reconciler.backup.retention: must be at least 0, got -1",
		))
	})

	It("keeps the file line of a value that fails validation", func() {
		_, err := config.Load(confFile("reconciler:\n  batch_size: 0\n"), envOf(requiredEnv()))
		var p *config.Problems
		Expect(errors.As(err, &p)).To(BeTrue())
		Expect(p.List).To(HaveLen(1))
		Expect(p.List[0].Key).To(Equal("reconciler.batch_size"))
		Expect(p.List[0].Line).To(Equal(2))
	})

	It("lists the six required settings when nothing is given", func() {
		_, err := config.Load("", nil)
		Expect(problems(err)).To(Equal([]string{
			"broker.username: required (set it in the file or with BLACKSMITH_BROKER_USERNAME)",
			"broker.password: required (set it in the file or with BLACKSMITH_BROKER_PASSWORD)",
			"operator.admin.username: required (set it in the file or with BLACKSMITH_OPERATOR_ADMIN_USERNAME)",
			"operator.admin.password: required (set it in the file or with BLACKSMITH_OPERATOR_ADMIN_PASSWORD)",
			"vault.address: required (set it in the file or with VAULT_ADDR)",
			"bosh.address: required (set it in the file or with BOSH_ENVIRONMENT)",
		}))
	})

	It("treats an empty variable as unset", func() {
		c, err := config.Load(confFile("reconciler:\n  interval: 2h\n"),
			envOf(with(requiredEnv(), map[string]string{"BLACKSMITH_RECONCILER_INTERVAL": ""})))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Reconciler.Interval).To(Equal(2 * time.Hour))
	})
})

var _ = Describe("request bounds", func() {
	It("are checked, each naming its key", func() {
		path := confFile(`
broker:
  max_body_bytes: 2048
  max_parameters_bytes: 4096
  max_parameters_depth: 0
  max_id_length: 10
  read_timeout: 0s
vault:
  max_record_bytes: 100
`)
		_, err := config.Load(path, envOf(requiredEnv()))
		Expect(problems(err)).To(ConsistOf(
			"broker.max_parameters_bytes: must not exceed broker.max_body_bytes (2048), got 4096",
			"broker.max_parameters_depth: must be between 1 and 100, got 0",
			"broker.max_id_length: must be between 36 and 255, got 10",
			"broker.read_timeout: must be a positive duration, got 0s",
			"vault.max_record_bytes: must be between 1024 and 1048576, got 100",
		))
	})
})

var _ = Describe("reconciler settings the daemon could not honour", func() {
	It("are refused when the configuration loads, not later", func() {
		_, err := config.Load(confFile("reconciler:\n  retry_delay: 0s\n  max_concurrency: 1001\n"), envOf(requiredEnv()))
		Expect(problems(err)).To(ConsistOf(
			"reconciler.max_concurrency: must be at most 1000, got 1001",
			"reconciler.retry_delay: must be a positive duration, got 0s",
		))
	})
})
