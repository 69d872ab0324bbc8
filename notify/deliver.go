package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// maxAnswer bounds the part of a receiver's answer that is read (and discarded).
const maxAnswer = 64 << 10

// statusError is a receiver's answer other than 2xx.
type statusError struct{ status int }

func (e *statusError) Error() string {
	return fmt.Sprintf("receiver answered %d %s", e.status, http.StatusText(e.status))
}

// newHTTPClient is the notifier's client: every attempt bounded by timeout,
// redirects not followed (a 3xx is the receiver's answer).
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport:     http.DefaultTransport.(*http.Transport).Clone(),
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// deliver posts e to h until it is delivered, refused for good, out of
// attempts or ctx ends, and counts and logs the outcome.
func (n *Notifier) deliver(ctx context.Context, h *hook, e Event) {
	log := n.log.With("webhook", h.index, "url", h.logURL, "event", e.Type, "event_id", e.ID)
	defer func() {
		if r := recover(); r != nil {
			h.series.failed.Inc()
			log.Error("webhook delivery panicked", "panic", r)
		}
	}()
	body, _ := json.Marshal(e) // cannot fail: strings and a time
	signature := sign(h.secret, body)
	attempts := 0
	onRetry := func(attempt int, err error, wait time.Duration) {
		h.series.retried.Inc()
		log.Info("webhook delivery failed: retrying", "attempt", attempt, "wait", wait, "error", err)
	}
	err := retry.Do(ctx, n.attempts-1, n.backoff, onRetry, func(ctx context.Context) error {
		attempts++
		return n.post(ctx, h, e.Type, e.ID, body, signature)
	})
	switch {
	case err == nil:
		h.series.delivered.Inc()
		log.Debug("webhook event delivered", "attempts", attempts)
	case ctx.Err() != nil:
		h.series.dropped.Inc()
		log.Warn("webhook delivery abandoned: notifier stopping", "attempts", attempts, "error", err)
	default:
		h.series.failed.Inc()
		log.Error("webhook delivery failed: giving up", append(statusAttr(err), "attempts", attempts, "error", err)...)
	}
}

// post makes one delivery attempt: nil on a 2xx, an error marked terminal
// when the receiver refused the event for good.
func (n *Notifier) post(ctx context.Context, h *hook, typ, id string, body []byte, signature string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return retry.Terminal(fmt.Errorf("building the request: %w", redact(err)))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "blacksmith")
	req.Header.Set("X-Blacksmith-Event", typ)
	req.Header.Set("X-Blacksmith-Delivery", id)
	req.Header.Set("X-Blacksmith-Signature", signature)
	start := time.Now()
	defer func() { h.series.duration.Observe(time.Since(start).Seconds()) }()
	res, err := n.http.Do(req)
	if err != nil {
		return fmt.Errorf("posting the event: %w", redact(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxAnswer))
	_ = res.Body.Close()
	return classify(res.StatusCode)
}

// classify turns a receiver's status into nil (2xx, delivered), an error
// worth retrying (5xx, 408, 429) or a terminal one (3xx, other 4xx).
func classify(status int) error {
	switch {
	case status >= 200 && status < 300:
		return nil
	case status >= 500, status == http.StatusRequestTimeout, status == http.StatusTooManyRequests:
		return &statusError{status}
	default:
		return retry.Terminal(&statusError{status})
	}
}

// sign is the X-Blacksmith-Signature of body: sha256=<hex HMAC-SHA256(secret, body)>.
func sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// redact drops the URL (and its query, which may hold a token) that the
// http package puts in its errors.
func redact(err error) error {
	if uerr, ok := errors.AsType[*url.Error](err); ok {
		return uerr.Err
	}
	return err
}

// statusAttr is the status log attribute of a receiver's refusal, if err is one.
func statusAttr(err error) []any {
	if serr, ok := errors.AsType[*statusError](err); ok {
		return []any{slog.Int("status", serr.status)}
	}
	return nil
}
