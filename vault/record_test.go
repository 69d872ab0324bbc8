package vault_test

import (
	"encoding/json"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Record encoding", func() {
	DescribeTable("re-encodes a stored record to the same bytes",
		func(stored string) {
			var r vault.Record
			Expect(json.Unmarshal([]byte(stored), &r)).To(Succeed())
			out, err := json.Marshal(r)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(out)).To(Equal(stored))
		},
		Entry("minimal", `{"plan_id":"p","service_id":"s"}`),
		Entry("unknown fields of every JSON type",
			`{"created_at":"2024-01-01T00:00:00Z","plan":{"id":"p","name":"Small"},"plan_id":"p","service_id":"s","status":"provisioning_started","tags":["a",1,null,true]}`),
		Entry("known fields stored with zero values",
			`{"created":0,"deployment_name":"","orphaned":false,"plan_id":"p","service_id":"s"}`),
		Entry("a known field that is null", `{"deployment_name":null,"plan_id":"p","service_id":"s"}`),
		Entry("a known field of an unexpected type",
			`{"created":"2024-01-01","orphaned":"yes","plan_id":"p","service_id":"s"}`),
		Entry("numbers beyond float64 precision in parameters",
			`{"parameters":{"big":12345678901234567890,"f":0.1000000000000000055511151231257827},"plan_id":"p","service_id":"s"}`),
		Entry("a last operation with an unknown field",
			`{"last_operation":{"state":"in progress","task_id":42,"type":"provision","x":1},"plan_id":"p","service_id":"s"}`),
		Entry("HTML-significant characters", `{"plan_id":"p\u003c\u0026\u003e","service_id":"s"}`),
	)

	It("keeps a mistyped, null or zero known field raw, until the caller sets it", func() {
		var r vault.Record
		Expect(json.Unmarshal([]byte(`{"service_id":"s","plan_id":"p","created":"yesterday","orphaned":false,"space_guid":null}`), &r)).To(Succeed())
		Expect(string(r.Extra["created"])).To(Equal(`"yesterday"`))
		Expect(r.Created).To(BeZero())
		Expect(r.Extra).To(HaveKey("orphaned"))
		Expect(r.Extra).To(HaveKey("space_guid"))

		r.Orphaned = true
		r.Created = 1700000000
		out, _ := json.Marshal(r)
		Expect(string(out)).To(Equal(`{"created":1700000000,"orphaned":true,"plan_id":"p","service_id":"s","space_guid":null}`))
	})

	It("decodes to a value equal to the one a caller builds", func() {
		var r vault.Record
		Expect(json.Unmarshal([]byte(`{"service_id":"s","plan_id":"p","deployment_name":"d","created":5}`), &r)).To(Succeed())
		Expect(&r).To(Equal(&vault.Record{ServiceID: "s", PlanID: "p", DeploymentName: "d", Created: 5}))
	})

	It("rejects a value that is not an object with ErrCorrupt", func() {
		var r vault.Record
		err := json.Unmarshal([]byte(`"not a record"`), &r)
		Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
	})

	It("clones deeply", func() {
		var r vault.Record
		Expect(json.Unmarshal([]byte(`{"service_id":"s","plan_id":"p","parameters":{"a":{"b":[1]}},"x":{"y":1},"last_operation":{"type":"update","state":"failed"}}`), &r)).To(Succeed())
		before, _ := json.Marshal(r)
		c := r.Clone()
		c.Parameters["a"].(map[string]any)["b"].([]any)[0] = "changed"
		c.Extra["x"][2] = 'Z'
		c.LastOperation.State = "succeeded"
		after, _ := json.Marshal(r)
		Expect(string(after)).To(Equal(string(before)))
		Expect((*vault.Record)(nil).Clone()).To(BeNil())
	})
})

var _ = Describe("Metadata encoding", func() {
	It("keeps unknown fields at every level", func() {
		stored := `{"history":[{"action":"created","by":"broker","time":"2024-01-01T00:00:00Z"}],"legacy":{"a":1},"releases":[{"name":"redis","sha1":"abc","version":"1"}],"vms":[{"id":"i","index":0,"job":"redis","state":"running"}]}`
		var md vault.Metadata
		Expect(json.Unmarshal([]byte(stored), &md)).To(Succeed())
		Expect(md.Releases).To(HaveLen(1))
		Expect(md.Releases[0].Name).To(Equal("redis"))
		out, _ := json.Marshal(md)
		Expect(string(out)).To(Equal(stored))
	})

	DescribeTable("AddHistory keeps the newest entries",
		func(n, limit int, want []string) {
			var md vault.Metadata
			for _, a := range []string{"a", "b", "c", "d", "e"}[:n] {
				md.AddHistory(vault.HistoryEntry{Action: a}, limit)
			}
			var got []string
			for _, h := range md.History {
				got = append(got, h.Action)
			}
			Expect(got).To(Equal(want))
		},
		Entry("under the cap", 2, 3, []string{"a", "b"}),
		Entry("over the cap", 5, 3, []string{"c", "d", "e"}),
		Entry("cap 1", 5, 1, []string{"e"}),
		Entry("no cap", 5, 0, []string{"a", "b", "c", "d", "e"}),
	)
})
