package vault

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/vault/api"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// DefaultFailoverWait is Options.FailoverWait's default: longer than a Raft
// election with Vault's default timing (about ten seconds), and short
// enough for a platform's request to wait through.
const DefaultFailoverWait = 15 * time.Second

// failoverBackoff spaces the tries of a request during a failover.
var failoverBackoff = retry.Backoff{Base: 50 * time.Millisecond, Limit: time.Second}

// failover is a Store's one memory of a Vault failover under way: since
// when requests have seen "no active node" answers without one being
// answered in between. Every request shares it, so that the wait is one per
// outage, not one per request.
type failover struct {
	wait time.Duration // negative: no retries

	mu    sync.Mutex
	since time.Time // zero: no failover seen since the last answer
}

// call sends one request with send, and again while its failure is a
// failover's and the outage began less than wait ago (nor ctx ended). A
// response to be retried is drained first.
func (f *failover) call(ctx context.Context, send func() (*api.Response, error)) (*api.Response, error) {
	if f == nil {
		return send()
	}
	for attempt := 1; ; attempt++ {
		resp, err := send()
		if err == nil || !failingOver(err) {
			f.answered()
			return resp, err
		}
		left := f.left()
		if left <= 0 || ctx.Err() != nil {
			return resp, err
		}
		drain(resp)
		if serr := retry.Sleep(ctx, min(failoverBackoff.Delay(attempt), left)); serr != nil {
			return nil, err
		}
	}
}

// answered ends the failover: Vault answered.
func (f *failover) answered() {
	f.mu.Lock()
	f.since = time.Time{}
	f.mu.Unlock()
}

// left is how much longer requests may wait for the failover under way to
// end, starting its clock on its first failure.
func (f *failover) left() time.Duration {
	if f.wait < 0 {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.since.IsZero() {
		f.since = time.Now()
	}
	return f.wait - time.Since(f.since)
}

// standbyAnswers are the errors a Vault node gives while it cannot serve
// because the cluster's active node changes: a standby that lost its
// active node, a Raft follower asked to write, a write whose leader lost
// its leadership while committing it (which a check-and-set retry tells
// apart: the version moved), an active node stepping down (its active
// context canceled while it still answers sys/health as active: Vault
// v1.21.1 vault/request_handling.go, switchedLockHandleRequest).
var standbyAnswers = []string{
	"local node not active",
	"active cluster node not found",
	"node is not the leader",
	"leadership lost",
	"active context canceled",
}

// failingOver says whether err is an answer of a Vault cluster without an
// active node right now, or of a node or balancer in between: a refused or
// reset or cut connection (the node is down or restarting), 429 (a standby), 502
// and 503 (a balancer without a healthy node, a sealed node), or a
// standby's 500. A timeout is not (a frozen node: the request may be under
// way), nor is any other answer.
func failingOver(err error) bool {
	var re *api.ResponseError
	if errors.As(err, &re) {
		switch re.StatusCode {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable:
			return true
		case http.StatusInternalServerError:
			for _, e := range re.Errors {
				for _, s := range standbyAnswers {
					if strings.Contains(e, s) {
						return true
					}
				}
			}
		}
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) ||
		(errors.As(err, &op) && op.Op == "dial")
}

// ownWrite says whether the version a check-and-set write's retry found
// (data, the one after the version it checked) holds what the write sent
// (body, {"data": ...}): the first try was committed by a node that lost
// its leadership before answering, and the retry met its own write, not
// another writer's.
func ownWrite(body []byte, data map[string]json.RawMessage) bool {
	var sent struct {
		Data any `json:"data"`
	}
	if json.Unmarshal(body, &sent) != nil {
		return false
	}
	found := make(map[string]any, len(data))
	for key, raw := range data {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return false
		}
		found[key] = v
	}
	sentMap, ok := sent.Data.(map[string]any)
	return ok && reflect.DeepEqual(sentMap, found)
}
