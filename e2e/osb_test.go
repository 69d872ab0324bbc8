package e2e_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	osb "sigs.k8s.io/go-open-service-broker-client/v2"
)

// newOSBClient is a real Open Service Broker client for the daemon.
func newOSBClient(d *daemon, user, pass string) osb.Client {
	GinkgoHelper()
	cfg := osb.DefaultClientConfiguration()
	cfg.Name = "e2e"
	cfg.URL = d.url
	cfg.APIVersion = osb.Version2_14()
	cfg.TimeoutSeconds = 60
	cfg.AuthConfig = &osb.AuthConfig{BasicAuthConfig: &osb.BasicAuthConfig{Username: user, Password: pass}}
	c, err := osb.NewClient(cfg)
	Expect(err).NotTo(HaveOccurred())
	return c
}

// lastOperation polls once; gone is true on 410.
func lastOperation(c osb.Client, id string) (state osb.LastOperationState, desc string, gone bool) {
	GinkgoHelper()
	res, err := c.PollLastOperation(&osb.LastOperationRequest{InstanceID: id})
	if osb.IsGoneError(err) {
		return "", "", true
	}
	Expect(err).NotTo(HaveOccurred())
	if res.Description != nil {
		desc = *res.Description
	}
	return res.State, desc, false
}

// eventuallySucceeded polls last_operation until the operation is no
// longer in progress and expects it to have succeeded.
func eventuallySucceeded(c osb.Client, id string) {
	GinkgoHelper()
	var desc string
	Eventually(func() osb.LastOperationState {
		var state osb.LastOperationState
		state, desc, _ = lastOperation(c, id)
		return state
	}).WithTimeout(60*time.Second).WithPolling(200*time.Millisecond).
		ShouldNot(Equal(osb.StateInProgress), "last description: %s", desc)
	state, desc, _ := lastOperation(c, id)
	Expect(state).To(Equal(osb.StateSucceeded), desc)
}

// eventuallyDeleted polls last_operation after a deprovision until it is
// done: "succeeded" (the broker remembers a deletion for a while) or 410
// Gone; a failure fails the spec.
func eventuallyDeleted(c osb.Client, id string) {
	GinkgoHelper()
	Eventually(func() bool {
		state, desc, gone := lastOperation(c, id)
		Expect(state).NotTo(Equal(osb.StateFailed), desc)
		return gone || state == osb.StateSucceeded
	}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(BeTrue())
}

func strPtr(s string) *string { return &s }
