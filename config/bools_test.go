package config_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

var _ = Describe("booleans", func() {
	load := func(o option, fileValue string, env map[string]string) any {
		GinkgoHelper()
		env = with(with(requiredEnv(), expandMap(o.extra)), env)
		c, err := config.Load(confFile(nested(o.key, fileValue)), envOf(env))
		Expect(err).NotTo(HaveOccurred())
		return o.get(c)
	}

	for _, o := range options {
		if _, isBool := o.def.(bool); !isBool {
			continue
		}
		Describe(o.key, func() {
			It("stays false when the file says false", func() {
				Expect(load(o, "false", nil)).To(BeFalse())
			})
			It("is true when the file says true", func() {
				Expect(load(o, "true", nil)).To(BeTrue())
			})
			It("takes "+o.env+"=true over a file false", func() {
				Expect(load(o, "false", map[string]string{o.env: "true"})).To(BeTrue())
			})
			It("takes "+o.env+"=false over a file true", func() {
				Expect(load(o, "true", map[string]string{o.env: "false"})).To(BeFalse())
			})
			It("rejects yes/no in the file, naming the key", func() {
				_, err := config.Load(confFile(nested(o.key, "yes")), envOf(requiredEnv()))
				Expect(problems(err)).To(ConsistOf(o.key + `: not a boolean: "yes"`))
			})
			It("rejects a value "+o.env+" cannot mean, naming the variable", func() {
				_, err := config.Load("", envOf(with(requiredEnv(), map[string]string{o.env: "maybe"})))
				Expect(problems(err)).To(ConsistOf(o.env + `: not a boolean: "maybe"`))
			})
		})
	}

	Describe("DEBUG", func() {
		debug := func(env map[string]string) bool {
			GinkgoHelper()
			c, err := config.Load("", envOf(with(requiredEnv(), env)))
			Expect(err).NotTo(HaveOccurred())
			return c.Debug
		}
		It("turns debug logging on like BLACKSMITH_DEBUG", func() {
			Expect(debug(map[string]string{"DEBUG": "true"})).To(BeTrue())
		})
		It("overrides the file", func() {
			c, err := config.Load(confFile("debug: true\n"), envOf(with(requiredEnv(), map[string]string{"DEBUG": "false"})))
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Debug).To(BeFalse())
		})
		It("gives way to BLACKSMITH_DEBUG", func() {
			Expect(debug(map[string]string{"DEBUG": "true", "BLACKSMITH_DEBUG": "false"})).To(BeFalse())
		})
		It("is ignored when it is not a boolean (other tools use DEBUG too)", func() {
			Expect(debug(map[string]string{"DEBUG": "express:*"})).To(BeFalse())
		})
	})
})
