package broker_test

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("several Directors", func() {
	var (
		e    *env
		west *sim.Director
	)

	BeforeEach(func() {
		d, c := newDirector()
		west = d
		westClient := broker.NamedDirector{Name: "west", Director: c, Reader: c}
		e = newEnv(func(o *broker.Options) {
			o.Directors[0].Name = "east"
			o.Directors = append(o.Directors, westClient)
			o.Catalog.Services[0].Plans[1].Director = "west" // redis-large
		})
	})

	It("deploys a plan's instances on the Director its plan names, and every later operation goes there", func() {
		e.provisioned("on-west", "redis-large")
		Expect(e.record("on-west").Director).To(Equal("west"))
		Expect(west.Stats().Deployments).To(Equal(1))
		Expect(e.director.Stats().Deployments).To(Equal(0), "nothing on the first Director")

		e.provisioned("on-east", "redis-small")
		Expect(e.record("on-east").Director).To(Equal("east"), "a plan naming no Director goes to the first, and its record says so")
		Expect(e.director.Stats().Deployments).To(Equal(1))

		a := e.request("PUT", instancePath("on-west")+"/service_bindings/b1", map[string]any{"service_id": "redis", "plan_id": "redis-large"})
		Expect(a.Status).To(Equal(http.StatusCreated), a.Raw)

		a = e.request("PATCH", instancePath("on-east")+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "plan_id": "redis-large"})
		Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
		Expect(a.Raw).To(ContainSubstring(`cannot move an instance to another Director`))

		a = e.request("DELETE", instancePath("on-west")+"?accepts_incomplete=true&service_id=redis&plan_id=redis-large", nil)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		e.eventuallyState("on-west", "succeeded")
		Expect(west.Stats().Deployments).To(Equal(0), "deleted on the Director it lives on")
		Expect(e.director.Stats().Deployments).To(Equal(1))
	})

	It("refuses a catalog whose plan names a Director that is not configured", func() {
		cat := testCatalog()
		cat.Services[0].Plans[0].Director = "north"
		_, err := broker.New(broker.Options{Catalog: cat, Directors: []broker.NamedDirector{{Name: "east", Director: e.client, Reader: e.client}}, Store: e.store,
			Username: "u", Password: "p"})
		Expect(err).To(MatchError(broker.ErrUnknownDirector))
		Expect(err.Error()).To(ContainSubstring(`plan redis-small: director: unknown BOSH Director "north" (configured: "east")`))
	})

	It("fails the operation of a record naming a Director that is gone, without touching the others", func() {
		e.provisioned("lost", "redis-small")
		rec := e.record("lost")
		rec.Director = "gone"
		_, err := e.store.Update(context.Background(), map[string]vault.Change{"lost": func(*vault.Record) (*vault.Record, error) { return rec, nil }})
		Expect(err).NotTo(HaveOccurred())
		a := e.request("DELETE", instancePath("lost")+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		Expect(a.Status).To(Equal(http.StatusInternalServerError), a.Raw)
		Expect(a.Raw).NotTo(ContainSubstring("gone"), "the platform user sees no internals")
		Expect(e.director.Stats().Deployments).To(Equal(1), "nothing deleted")
	})
})
