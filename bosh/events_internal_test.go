package bosh

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("parseEventPage", func() {
	It("decodes events.json, the Director's answer: start and end events, locks, an instance, an error", func() {
		events, err := parseEventPage(fixture("events.json"), "")
		Expect(err).NotTo(HaveOccurred())
		Expect(events).To(HaveLen(10))
		const dep = "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b"
		Expect(events[0]).To(Equal(Event{ID: "4127", ParentID: "4126", Timestamp: 1751365000, User: "broker-client",
			Action: "delete", ObjectType: "deployment", ObjectName: dep, Task: "4712", Deployment: dep,
			Error: "Failed to acquire lock for lock:deployment:" + dep + " uid: 0e7a3c9d-2b1f-4a6e-9c8d-7f6e5d4c3b2a. " +
				"Locking task id is 4713, description: 'create deployment'"}))
		Expect(events[2]).To(Equal(Event{ID: "4124", Timestamp: 1751364981, User: "broker-client", Action: "acquire",
			ObjectType: "lock", ObjectName: "lock:deployment:" + dep, Task: "4713", Deployment: dep}))
		Expect(events[6]).To(Equal(Event{ID: "4120", ParentID: "4119", Timestamp: 1751364880, User: "broker-client",
			Action: "create", ObjectType: "instance", ObjectName: "redis/209b96c8-e482-43c7-9f3e-04de9f93c535",
			Task: "4711", Deployment: dep, Instance: "redis/209b96c8-e482-43c7-9f3e-04de9f93c535"}))
		Expect(events[9]).To(HaveField("ID", "4117"))
		Expect(events[9]).To(HaveField("ParentID", ""))

		_, err = parseEventPage(fixture("events.json"), "4127")
		Expect(err).To(MatchError("event 1 (id 4127) is not older than before_id 4127"))
		_, err = parseEventPage(fixture("events.json"), "4128")
		Expect(err).NotTo(HaveOccurred())
	})

	It("seeds FuzzParseEventPage with events.json byte for byte", func() {
		Expect(seedEventPage).To(Equal(string(fixture("events.json"))))
	})

	It("reads an empty page, and null as one", func() {
		for _, body := range []string{"[]", " [ ]\n", "null"} {
			events, err := parseEventPage([]byte(body), "1")
			Expect(err).NotTo(HaveOccurred(), body)
			Expect(events).To(BeEmpty(), body)
		}
	})
})
