package sim

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// limiter counts authenticated /v3 requests in fixed windows, as the Cloud
// Controller's rate limiter does (one counter per user, reset every interval).
type limiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	reset  time.Time
	count  int
}

// SetRateLimit sets how many /v3 requests are allowed per window (0 = no
// limit) and starts a new window; window <= 0 keeps the current one's length.
func (k *Knobs) SetRateLimit(limit int, window time.Duration) {
	k.limit.mu.Lock()
	defer k.limit.mu.Unlock()
	if window > 0 {
		k.limit.window = window
	}
	k.limit.limit, k.limit.count, k.limit.reset = max(limit, 0), 0, time.Time{}
}

// rateLimit returns the limit and the window's length.
func (k *Knobs) rateLimit() (int, time.Duration) {
	k.limit.mu.Lock()
	defer k.limit.mu.Unlock()
	return k.limit.limit, k.limit.window
}

// allow counts a request, sets the X-RateLimit-* headers and, past the
// limit, answers 429; it reports whether the request may go on.
func (l *limiter) allow(w http.ResponseWriter) bool {
	l.mu.Lock()
	if l.limit == 0 {
		l.mu.Unlock()
		return true
	}
	n := time.Now()
	if !n.Before(l.reset) {
		l.count, l.reset = 0, n.Add(l.window)
	}
	l.count++
	limit, count, reset := l.limit, l.count, l.reset
	l.mu.Unlock()
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(limit-count, 0)))
	if count <= limit {
		return true
	}
	body := simkit.JSON(map[string][]cfError{"errors": {errRateLimitExceeded}})
	h.Set("Retry-After", strconv.FormatInt(int64(time.Until(reset).Seconds()+0.5), 10))
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(body)
	return false
}
