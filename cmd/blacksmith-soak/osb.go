package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// broker sends OSB requests to the daemons as a platform's balancer in
// front of several broker VMs does: to the next daemon, and to another
// when one does not answer at all.
type broker struct {
	daemons []*daemon
	next    atomic.Int64
	client  *http.Client
}

// answer is one OSB request's outcome: the status (0: no daemon answered)
// and the body.
type answer struct {
	status int
	body   []byte
	tries  int // daemons tried (more than one: the first refused the connection)
}

// do sends method path with body to a daemon; a refused connection tries
// the next daemon.
func (b *broker) do(ctx context.Context, method, path string, body any) answer {
	raw, _ := json.Marshal(body)
	for try := 1; try <= len(b.daemons); try++ {
		d := b.daemons[int(b.next.Add(1))%len(b.daemons)]
		req, err := http.NewRequestWithContext(ctx, method, d.url+path, bytes.NewReader(raw))
		if err != nil {
			return answer{tries: try}
		}
		req.SetBasicAuth(brokerUser, brokerPass)
		req.Header.Set("X-Broker-API-Version", "2.17")
		req.Header.Set("Content-Type", "application/json")
		res, err := b.client.Do(req)
		if err != nil {
			continue
		}
		out, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		return answer{status: res.StatusCode, body: out, tries: try}
	}
	return answer{tries: len(b.daemons)}
}

// actionable says whether a platform can act on the answer: a success, or
// a failure with an OSB error body (a JSON object) it can show or retry on.
func (a answer) actionable() bool {
	if a.status/100 == 2 {
		return true
	}
	var e map[string]any
	return a.status != 0 && json.Unmarshal(a.body, &e) == nil
}

// failed says whether the answer is an error the platform sees (a 410 to
// a deprovision or unbind is the end it asked for).
func (a answer) failed() bool { return a.status/100 != 2 && a.status != http.StatusGone }

// newID is a random UUID (version 4), as platforms name instances.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// ledger is what the OSB clients did and saw.
type ledger struct {
	mu           sync.Mutex
	requests     int
	errors       int
	unactionable []string
	errorSeconds map[int64]bool    // unix seconds with an error
	errorsAt     map[int64]int     // errors by unix second
	retriesAt    map[int64]int     // requests sent again by unix second (to another daemon, or a poll after an error)
	live         map[string]bool   // instances provisioned and not deprovisioned
	leaving      map[string]bool   // instances whose deprovision was asked
	bindings     map[string]string // instance/binding -> the password the bind returned
	stuck        []string          // operations still in progress when their client gave up
}

// note records one answer; nothing once ctx ended (the soak stopping its
// clients cuts their requests: not the broker's answers).
func (l *ledger) note(ctx context.Context, what string, a answer) {
	if ctx.Err() != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now().Unix()
	l.requests++
	if a.tries > 1 {
		l.retriesAt[now] += a.tries - 1
	}
	if a.failed() {
		l.errors++
		l.errorSeconds[now] = true
		l.errorsAt[now]++
	}
	if !a.actionable() && len(l.unactionable) < 20 {
		l.unactionable = append(l.unactionable, fmt.Sprintf("%s: %d %.200s", what, a.status, a.body))
	}
}

// osbClient provisions, updates, binds, unbinds and deprovisions instances
// in a loop until ctx ends, each asynchronous operation polled to its end.
func osbClient(ctx context.Context, b *broker, l *ledger, cc *platform) {
	for ctx.Err() == nil {
		id := newID()
		// The platform holds an instance from the moment it is asked for
		// until its deprovision ended, as the Cloud Controller does.
		if cc.add(ctx, "redis-small-"+id) != nil {
			continue
		}
		if !provision(ctx, b, l, id) {
			_ = cc.remove(context.Background(), id)
			sleep(ctx, time.Second) // a platform's user does not ask again at once
			continue
		}
		a := b.do(ctx, http.MethodPatch, "/v2/service_instances/"+id+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "parameters": map[string]any{"maxmemory": "256mb"}})
		l.note(ctx, "update", a)
		if a.status == http.StatusAccepted {
			poll(ctx, b, l, id, "update")
		}
		bind := newID()
		a = b.do(ctx, http.MethodPut, "/v2/service_instances/"+id+"/service_bindings/"+bind,
			map[string]any{"service_id": "redis", "plan_id": "redis-small", "bind_resource": map[string]any{"app_guid": "soak-app"}})
		l.note(ctx, "bind", a)
		var bound struct {
			Credentials map[string]any `json:"credentials"`
		}
		if a.status/100 == 2 && json.Unmarshal(a.body, &bound) == nil {
			pw, _ := bound.Credentials["password"].(string)
			l.mu.Lock()
			l.bindings[id+"/"+bind] = pw
			l.mu.Unlock()
		}
		// Every other instance is kept, with its binding, for the checks.
		if bind[0]%2 == 0 {
			continue
		}
		a = b.do(ctx, http.MethodDelete, "/v2/service_instances/"+id+"/service_bindings/"+bind+"?service_id=redis&plan_id=redis-small", nil)
		l.note(ctx, "unbind", a)
		if a.status/100 == 2 || a.status == http.StatusGone {
			l.mu.Lock()
			delete(l.bindings, id+"/"+bind)
			l.mu.Unlock()
		}
		l.mu.Lock()
		l.leaving[id] = true
		l.mu.Unlock()
		a = b.do(ctx, http.MethodDelete, "/v2/service_instances/"+id+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		l.note(ctx, "deprovision", a)
		if a.status == http.StatusAccepted && poll(ctx, b, l, id, "deprovision") || a.status == http.StatusGone || a.status == http.StatusOK {
			l.mu.Lock()
			delete(l.live, id)
			l.mu.Unlock()
			_ = cc.remove(context.Background(), id)
		}
	}
}

// provision provisions id and polls it to its end; true when it succeeded.
func provision(ctx context.Context, b *broker, l *ledger, id string) bool {
	a := b.do(ctx, http.MethodPut, "/v2/service_instances/"+id+"?accepts_incomplete=true",
		map[string]any{"service_id": "redis", "plan_id": "redis-small", "organization_guid": "soak-org", "space_guid": "soak-space"})
	l.note(ctx, "provision", a)
	if a.status != http.StatusAccepted && a.status != http.StatusCreated {
		return false
	}
	if a.status == http.StatusAccepted && !poll(ctx, b, l, id, "provision") {
		return false
	}
	l.mu.Lock()
	l.live[id] = true
	l.mu.Unlock()
	return true
}

// poll asks last_operation until the operation ends (true: succeeded, or
// gone after a deprovision), at most 5 minutes.
func poll(ctx context.Context, b *broker, l *ledger, id, op string) bool {
	deadline := time.Now().Add(5 * time.Minute)
	failed := false
	for time.Now().Before(deadline) {
		if retry.Sleep(ctx, 500*time.Millisecond) != nil {
			break
		}
		a := b.do(ctx, http.MethodGet, "/v2/service_instances/"+id+"/last_operation", nil)
		if failed {
			a.tries++ // asked again after an error
		}
		l.note(ctx, "last_operation", a)
		failed = a.failed()
		if a.status == http.StatusGone && op == "deprovision" {
			return true
		}
		var st struct {
			State string `json:"state"`
		}
		if a.status != http.StatusOK || json.Unmarshal(a.body, &st) != nil {
			continue
		}
		switch st.State {
		case "succeeded":
			return true
		case "failed":
			return false
		}
	}
	if ctx.Err() == nil {
		l.mu.Lock()
		l.stuck = append(l.stuck, op+" "+id)
		l.mu.Unlock()
	}
	return false
}
