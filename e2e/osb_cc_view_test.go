package e2e_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ccsim "github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

var _ = Describe("the catalog fields as the Cloud Controller simulator shows them", func() {
	It("shows each plan's plan_updateable (where an instance may move) and redis-large's maximum_polling_duration from the daemon's catalog", func() {
		d := startDaemon("")
		cc, err := ccsim.New(ccsim.Options{PollInterval: 200 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cc.Close)
		tok := ccToken(cc)
		status, location, body := ccCall(cc, tok, "POST", "/v3/service_brokers", map[string]any{
			"name": "daemon", "url": d.url,
			"authentication": map[string]any{"type": "basic", "credentials": map[string]any{"username": brokerUser, "password": brokerPass}},
		})
		Expect(status).To(Equal(http.StatusAccepted), "%v", body)
		Expect(jobEnds(cc, tok, location)).To(Equal("COMPLETE"), "the daemon's catalog fetched")

		status, _, plans := ccCall(cc, tok, "GET", "/v3/service_plans?per_page=50", nil)
		Expect(status).To(Equal(http.StatusOK))
		updateable, polling := map[string]any{}, map[string]any{}
		for _, r := range plans["resources"].([]any) {
			bc := r.(map[string]any)["broker_catalog"].(map[string]any)
			id := bc["id"].(string)
			updateable[id] = bc["features"].(map[string]any)["plan_updateable"]
			polling[id] = bc["maximum_polling_duration"]
		}
		Expect(updateable).To(Equal(map[string]any{"redis-small": true, "redis-large": true, "postgresql-small": false, "postgresql-large": true}),
			"postgresql-small's instances cannot move: postgresql-large is not updatable")
		Expect(polling).To(HaveKeyWithValue("redis-large", 7200.0))
		Expect(polling).To(HaveKeyWithValue("redis-small", BeNil()))
	})
})
