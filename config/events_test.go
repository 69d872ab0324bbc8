package config_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/notify"
)

// A webhook asks for events by name: the configuration must accept every
// type the notifier sends, and only those.
var _ = Describe("WebhookEvents", func() {
	It("are notify.Types, in their order", func() {
		Expect(config.WebhookEvents).To(Equal(notify.Types))
	})
})
