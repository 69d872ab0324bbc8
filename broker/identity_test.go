package broker_test

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// cfIdentity is the originating identity a Cloud Controller sends for user.
func cfIdentity(user string) map[string]string {
	return map[string]string{"X-Broker-API-Originating-Identity": "cloudfoundry " +
		base64.StdEncoding.EncodeToString([]byte(`{"user_id":"`+user+`"}`))}
}

// cfContext is the context a Cloud Controller sends with a provision.
func cfContext(instanceName string) map[string]any {
	return map[string]any{"platform": "cloudfoundry", "organization_guid": "org-1", "organization_name": "acme",
		"space_guid": "space-1", "space_name": "dev", "instance_name": instanceName,
		"organization_annotations": map[string]any{"x": "y"}}
}

var _ = Describe("who asked, and where", func() {
	var (
		e    *env
		logs *gbytes.Buffer
	)

	BeforeEach(func() {
		logs = gbytes.NewBuffer()
		e = newEnv(func(o *broker.Options) {
			o.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(GinkgoWriter, logs), nil))
			o.Catalog.Services[0].Limit = 0 // as many instances as there are headers to try
		})
	})

	events := func(id string) []vault.Event {
		GinkgoHelper()
		evs, err := e.store.Events(context.Background(), id, 0)
		Expect(err).NotTo(HaveOccurred())
		return evs
	}

	It("records the originating identity in each history event and the last context in the record", func() {
		body := provisionBody("redis-large", nil)
		body["context"] = cfContext("my-redis")
		a := e.requestWith(brokerUser, brokerPass, apiVersion, cfIdentity("683ea748-3092-4ff4-b656-39cacc4d5360"),
			"PUT", instancePath("w-1")+"?accepts_incomplete=true", body)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		e.eventuallyState("w-1", "succeeded")
		Expect(e.record("w-1").Context).To(Equal(map[string]string{"platform": "cloudfoundry", "organization_guid": "org-1",
			"organization_name": "acme", "space_guid": "space-1", "space_name": "dev", "instance_name": "my-redis"}))

		bind := e.requestWith(brokerUser, brokerPass, apiVersion, cfIdentity("binder-1"),
			"PUT", instancePath("w-1")+"/service_bindings/wb-1", map[string]any{"service_id": "redis", "plan_id": "redis-large"})
		Expect(bind.Status).To(Equal(http.StatusCreated), bind.Raw)

		renamed := e.requestWith(brokerUser, brokerPass, apiVersion, cfIdentity("renamer-1"), "PATCH",
			instancePath("w-1")+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "context": cfContext("cache")})
		Expect(renamed.Status).To(Equal(http.StatusOK), "a rename deploys nothing: %s", renamed.Raw)
		Expect(e.record("w-1").Context).To(HaveKeyWithValue("instance_name", "cache"))

		Expect(events("w-1")).To(ContainElements(
			And(HaveField("Kind", "provision"), HaveField("Details", And(HaveKeyWithValue("platform", "cloudfoundry"),
				HaveKeyWithValue("user", "683ea748-3092-4ff4-b656-39cacc4d5360")))),
			And(HaveField("Kind", "bind"), HaveField("Details", HaveKeyWithValue("user", "binder-1"))),
		))
	})

	It("takes a malformed identity or context as none: the request goes on, the log says so once", func() {
		for i, header := range []string{
			"cloudfoundry",
			"cloudfoundry not-base64!",
			"cloudfoundry " + base64.StdEncoding.EncodeToString([]byte(`["a"]`)),
			"cloudfoundry " + base64.StdEncoding.EncodeToString([]byte(`{"user_id": 5}`)),
			"cloudfoundry " + base64.StdEncoding.EncodeToString([]byte(`{"user_id":"a\u0007b"}`)),
			"cloud foundry " + base64.StdEncoding.EncodeToString([]byte(`{"user_id":"u"}`)),
			"cloudfoundry " + strings.Repeat("A", 5000),
		} {
			id := "w-bad-" + string(rune('a'+i))
			body := provisionBody("redis-large", nil)
			body["context"] = map[string]any{"platform": 5, "instance_name": "line\nbreak", "space_name": strings.Repeat("s", 300)}
			a := e.requestWith(brokerUser, brokerPass, apiVersion, map[string]string{"X-Broker-API-Originating-Identity": header},
				"PUT", instancePath(id)+"?accepts_incomplete=true", body)
			Expect(a.Status).To(Equal(http.StatusAccepted), "%q: %s", header, a.Raw)
			Expect(e.record(id).Context).To(BeNil(), "no field of that context is a plain string")
			Eventually(func() []vault.Event { return events(id) }).Should(ContainElement(HaveField("Kind", "provision")))
			Expect(events(id)).To(HaveEach(HaveField("Details", Not(HaveKey("user")))))
		}
		Expect(strings.Count(string(logs.Contents()), "X-Broker-API-Originating-Identity is malformed")).To(Equal(1))
	})
})
