package broker_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Instance and binding ids", func() {
	var e *env

	BeforeEach(func() { e = newEnv() })

	DescribeTable("that cannot name a BOSH deployment or a Vault path are refused with 400 naming the id",
		func(method, path, want string) {
			var body any
			if method == http.MethodPut {
				body = provisionBody("redis-small", nil)
			}
			a := e.request(method, path, body)
			Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
			Expect(a.Body["description"]).To(ContainSubstring(want))
			Expect(e.director.Stats().Tasks).To(BeZero(), "nothing reached the Director")
		},
		Entry("a space", "PUT", "/v2/service_instances/my%20redis?accepts_incomplete=true", `instance id "my redis"`),
		Entry("an encoded slash", "PUT", "/v2/service_instances/a%2Fb?accepts_incomplete=true", `instance id "a/b"`),
		Entry("a letter outside ASCII", "PUT", "/v2/service_instances/caf%C3%A9?accepts_incomplete=true", `instance id "café"`),
		Entry("a binding id with a colon", "PUT", "/v2/service_instances/i-1/service_bindings/b:1", `binding id "b:1"`),
		Entry("on last_operation too", "GET", "/v2/service_instances/a%20b/last_operation", `instance id "a b"`),
		Entry("the broker's own folder", "PUT", "/v2/service_instances/blacksmith?accepts_incomplete=true", `instance id "blacksmith" is reserved`),
		Entry("the legacy index", "PUT", "/v2/service_instances/db?accepts_incomplete=true", `instance id "db" is reserved`),
		Entry("on deprovision too", "DELETE", "/v2/service_instances/a%20b?accepts_incomplete=true&service_id=redis&plan_id=redis-small", `instance id "a b"`),
	)

	It("accepts UUIDs and the letters, digits, '-', '_' and '.' they are made of", func() {
		e.provision("6c1e4c5e-5d5a-4f6e-9a43-0d2f1b7e8c11", "redis-small", nil)
		e.provision("My_Instance.2", "redis-small", nil)
	})
})
