package sim_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

// expectParsed checks what a Parse function returned: want, or an error
// matching ErrBadOptions that says wantErr.
func expectParsed[T any](got T, err error, want T, wantErr string) {
	GinkgoHelper()
	if wantErr != "" {
		Expect(err).To(MatchError(sim.ErrBadOptions))
		Expect(err).To(MatchError(ContainSubstring(wantErr)))
		return
	}
	Expect(err).NotTo(HaveOccurred())
	Expect(got).To(Equal(want))
}

var _ = DescribeTable("ParseFailure",
	func(spec string, want sim.Failure, wantErr string) {
		got, err := sim.ParseFailure(spec)
		expectParsed(got, err, want, wantErr)
	},
	Entry("every key", "endpoint=/deployments/:name,method=GET,rate=0.25,status=503,delay=2s,count=5",
		sim.Failure{Endpoint: "/deployments/:name", Method: "GET", Rate: 0.25, Status: 503, Delay: 2 * time.Second, Count: 5}, ""),
	Entry("a route with its method", "endpoint=GET /deployments", sim.Failure{Endpoint: "GET /deployments"}, ""),
	Entry("only slow", " delay=100ms ", sim.Failure{Delay: 100 * time.Millisecond}, ""),
	Entry("not key=value", "rate", sim.Failure{}, `"rate" is not key=value`),
	Entry("unknown key", "colour=red", sim.Failure{}, "colour: unknown key"),
	Entry("rate above 1", "rate=1.5", sim.Failure{}, "not between 0 and 1"),
	Entry("bad delay", "delay=soon", sim.Failure{}, "delay"),
	Entry("a status no server can send", "status=1000", sim.Failure{}, "status 1000 is not between 200 and 599"),
	Entry("a negative count", "endpoint=/info,count=-2", sim.Failure{}, "count -2 is negative"),
)

var _ = DescribeTable("ParseSeedPlan",
	func(spec string, want sim.SeedPlan, wantErr string) {
		got, err := sim.ParseSeedPlan(spec)
		expectParsed(got, err, want, wantErr)
	},
	Entry("every key", "service_id=redis,plan_id=redis-small,release=redis,version=16.1.0+dev.2,instances=3",
		sim.SeedPlan{ServiceID: "redis", PlanID: "redis-small", Release: "redis", Version: "16.1.0+dev.2", Instances: 3}, ""),
	Entry("only what is required", "plan_id=p,release=r", sim.SeedPlan{PlanID: "p", Release: "r"}, ""),
	Entry("no plan id", "release=r", sim.SeedPlan{}, "the plan id is required"),
	Entry("no release", "plan_id=p", sim.SeedPlan{}, "the release is required"),
	Entry("a release that would break the manifest", "plan_id=p,release=a: b", sim.SeedPlan{}, `release "a: b": use letters`),
	Entry("a plan id that is no deployment name", "plan_id=a/b,release=r", sim.SeedPlan{}, `plan id "a/b"`),
	Entry("too many instances", "plan_id=p,release=r,instances=1001", sim.SeedPlan{}, "instances 1001 is not between 0 and 1000"),
	Entry("instances not a number", "plan_id=p,release=r,instances=many", sim.SeedPlan{}, "instances"),
	Entry("unknown key", "plan=p", sim.SeedPlan{}, "plan: unknown key"),
)

var _ = DescribeTable("New refuses options it cannot serve, naming what is wrong",
	func(opts sim.Options, problem string) {
		d, err := sim.New(opts)
		if err == nil {
			_ = d.Close()
		}
		Expect(err).To(MatchError(sim.ErrBadOptions))
		Expect(err).To(MatchError(ContainSubstring(problem)))
	},
	Entry("an unknown auth", sim.Options{Auth: "ldap"}, `auth "ldap"`),
	Entry("a CA path without TLS", sim.Options{CACertPath: "/nonexistent/ca.pem"}, "only written with TLS on"),
	Entry("a negative seed", sim.Options{Seed: -1}, "seed -1 is not between 0 and 100000"),
	Entry("a seed above MaxSeed", sim.Options{Seed: sim.MaxSeed + 1}, "seed 100001"),
	Entry("a seed plan without release", sim.Options{SeedPlans: []sim.SeedPlan{{PlanID: "p"}}}, "the release is required"),
	Entry("a seed plan whose version breaks YAML", sim.Options{SeedPlans: []sim.SeedPlan{{PlanID: "p", Release: "r", Version: `1"`}}}, `version "1\""`),
	Entry("a failure with a bad status", sim.Options{Failures: []sim.Failure{{Status: 99}}}, "status 99"),
	Entry("a private external host", sim.Options{ExternalHost: "10.0.0.6:25555"}, `external host "10.0.0.6:25555" is neither loopback`),
	Entry("a public external host", sim.Options{ExternalHost: "director.example.com:25555"}, "is neither loopback, localhost nor under .invalid"),
	Entry("a private UAA", sim.Options{Auth: sim.AuthUAA, UAAURL: "https://192.168.50.4:8443"}, `UAA URL "https://192.168.50.4:8443"`),
	Entry("a UAA URL without scheme", sim.Options{Auth: sim.AuthUAA, UAAURL: "uaa.bosh.invalid:8443"}, "is not http(s)"),
)

var _ = It("takes loopback, localhost and .invalid external hosts and UAA URLs", func() {
	for _, o := range []sim.Options{{ExternalHost: "127.0.0.2:25555"}, {ExternalHost: "[::1]:25555"},
		{ExternalHost: "director.bosh.invalid:25555"}, {ExternalHost: "localhost:25555"},
		{Auth: sim.AuthUAA, UAAURL: "https://uaa.bosh.invalid:8443"}, {Auth: sim.AuthUAA, UAAURL: "http://127.0.0.1:9"}} {
		start(o)
	}
})
