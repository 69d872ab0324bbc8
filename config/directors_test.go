package config_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

const twoDirectors = `
broker:
  username: broker
  password: broker-secret
operator:
  admin: {username: operator, password: operator-secret}
vault:
  address: http://127.0.0.1:8200
bosh:
  - name: east
    address: 127.0.0.1:25555
    username: admin
    password: east-secret
  - name: west
    address: https://127.0.0.2:25555
    client_id: blacksmith
    client_secret: west-secret
    rate_limit: 20
`

var _ = Describe("several Directors (bosh as a list)", func() {
	It("reads each Director from the defaults of one, the first as bosh", func() {
		c, err := config.Load(confFile(twoDirectors), nil)
		Expect(err).NotTo(HaveOccurred())
		ds := c.Directors()
		Expect(ds).To(HaveLen(2))
		Expect(ds[0].Name).To(Equal("east"))
		Expect(ds[0].Address).To(Equal("https://127.0.0.1:25555"), "a bare host:port is taken as the bosh CLI takes it")
		Expect(c.BOSH).To(Equal(ds[0]))
		Expect(ds[1].Name).To(Equal("west"))
		Expect(ds[1].RateLimit).To(Equal(20.0))
		Expect(ds[1].Timeout).To(Equal(config.DefaultBOSH().Timeout), "each Director starts from the defaults")
		Expect(ds[1].MaxInFlight).To(Equal(10))
	})

	It("keeps a single bosh section working, named default", func() {
		c, err := config.Load(confFile(requiredYAML), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Directors()).To(HaveLen(1))
		Expect(c.Directors()[0].Name).To(Equal("default"))
	})

	It("writes the list back as a list that loads to the same configuration, secrets redacted", func() {
		c, err := config.Load(confFile(twoDirectors), nil)
		Expect(err).NotTo(HaveOccurred())
		out, err := c.YAML()
		Expect(err).NotTo(HaveOccurred())
		again, err := config.Load(confFile(string(out)), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Directors()).To(Equal(c.Directors()))
		red, err := c.Redacted().YAML()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(red)).NotTo(ContainSubstring("west-secret"))
		Expect(string(red)).NotTo(ContainSubstring("east-secret"))
		Expect(c.MoreDirectors[0].ClientSecret).To(Equal("west-secret"), "Redacted works on a copy")
	})

	DescribeTable("names what is wrong in a list",
		func(list string, want ...string) {
			text := strings.Replace(twoDirectors, twoDirectors[strings.Index(twoDirectors, "bosh:"):], list, 1)
			_, err := config.Load(confFile(text), nil)
			Expect(problems(err)).To(ConsistOf(want))
		},
		Entry("two Directors with one name", "bosh:\n  - name: a\n    address: 127.0.0.1\n  - name: a\n    address: 127.0.0.2\n",
			`bosh[1].name: "a" is the name of bosh[0] already: each Director needs its own`),
		Entry("a Director without a name or an address", "bosh:\n  - name: a\n    address: 127.0.0.1\n  - timeout: 5s\n",
			"bosh[1].name: required: each Director of a list needs its own name", "bosh[1].address: required"),
		Entry("a name that cannot be a label", "bosh:\n  - name: a\n    address: 127.0.0.1\n  - name: East Coast\n    address: 127.0.0.2\n",
			`bosh[1].name: must be 1 to 57 lowercase letters, digits, '_' or '-', starting with a letter or digit; got "East Coast"`),
		Entry("a name with a dot (the feed's state document could not hold it)", "bosh:\n  - name: a\n    address: 127.0.0.1\n  - name: bosh.west\n    address: 127.0.0.2\n",
			`bosh[1].name: must be 1 to 57 lowercase letters, digits, '_' or '-', starting with a letter or digit; got "bosh.west"`),
		Entry("an item that is not a mapping", "bosh:\n  - 127.0.0.1\n", `bosh[0]: expected a mapping (one Director), got "127.0.0.1"`,
			"bosh.address: required (set it in the file or with BOSH_ENVIRONMENT)"),
		Entry("an unknown key in an item", "bosh:\n  - name: a\n    address: 127.0.0.1\n    adress: x\n", "bosh[0].adress: unknown key"),
		Entry("an empty list", "bosh: []\n", "bosh: an empty list: at least one Director is needed",
			"bosh.address: required (set it in the file or with BOSH_ENVIRONMENT)"),
	)
})
