package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// Orphan mitigation, as CC's OrphanMitigator enqueues it: a background
// job (DeleteOrphanedInstance, DeleteOrphanedBinding) that sends the
// deprovision or unbind once, and again up to maxOrphanAttempts times,
// 2^attempt minutes apart, while the broker refuses it.
const maxOrphanAttempts = 11

// orphanMitigator sends the deprovisions and unbinds of what a broker may
// have made although its answer failed.
type orphanMitigator struct {
	client *brokerClient
	jobs   *jobs
	user   string
	// backoff is the wait before the attempt after the n-th (from 1).
	backoff func(attempt int) time.Duration
}

func newOrphanMitigator(client *brokerClient, j *jobs, user string) *orphanMitigator {
	return &orphanMitigator{client: client, jobs: j, user: user,
		backoff: func(n int) time.Duration { return time.Duration(1<<n) * time.Minute }}
}

// deprovision is DeleteOrphanedInstance: the instance's deprovision with
// accepts_incomplete=true; a 202 is not polled.
func (m *orphanMitigator) deprovision(b Broker, instanceGUID, serviceID, planID string) {
	q := map[string][]string{"accepts_incomplete": {"true"}, "plan_id": {planID}, "service_id": {serviceID}}
	m.send(b, osbCall{method: http.MethodDelete, path: "/v2/service_instances/" + instanceGUID, query: q})
}

// unbind is DeleteOrphanedBinding: the binding's unbind with accepts_incomplete=true.
func (m *orphanMitigator) unbind(b Broker, instanceGUID, bindingGUID, serviceID, planID string) {
	q := map[string][]string{"accepts_incomplete": {"true"}, "plan_id": {planID}, "service_id": {serviceID}}
	m.send(b, osbCall{method: http.MethodDelete, path: "/v2/service_instances/" + instanceGUID + "/service_bindings/" + bindingGUID, query: q})
}

// send runs call in the background until the broker accepts it (200,
// 202, 410) or the attempts are spent; Close ends it.
func (m *orphanMitigator) send(b Broker, call osbCall) {
	m.jobs.background(func(ctx context.Context) {
		for attempt := 1; attempt <= maxOrphanAttempts; attempt++ {
			a, err := m.client.instanceCall(ctx, b, m.user, call)
			if err == nil && firstAnswerError(OpDelete, a) == nil {
				return
			}
			if attempt == maxOrphanAttempts || !simkit.Sleep(ctx, m.backoff(attempt)) {
				return
			}
		}
	})
}

// orphaned says whether CC mitigates a failed provision or bind (Client#provision,
// Client#bind): after its own timeout (not a broker's 408), a
// ServiceBrokerBadResponse (5xx, 410, 422 but for the errors it names,
// another status than 200/201/202 and 4xx), or a malformed answer unless
// its status is 200. a.status is 0 when the broker was not heard.
func orphaned(a osbAnswer, err *cfError, special []string) bool {
	if err == nil {
		return false
	}
	switch s := a.status; {
	case s == 0:
		return *err == errBrokerTimeout
	case s >= 500, s == http.StatusGone, s < 200, s > 202 && s < 400:
		return true
	case s == http.StatusUnprocessableEntity:
		var body struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(a.body, &body)
		for _, e := range special {
			if body.Error == e {
				return false
			}
		}
		return true
	case s == http.StatusCreated || s == http.StatusAccepted:
		return *err == errBrokerMalformed
	}
	return false
}

// The 422 errors a provision and a bind answer with that are not
// ServiceBrokerBadResponse (ResponseParser#parse_provision, #parse_bind).
var (
	provisionSpecial = []string{"AsyncRequired", "ConcurrencyError", "MaintenanceInfoConflict"}
	bindSpecial      = []string{"RequiresApp", "AsyncRequired", "ConcurrencyError"}
)
