package sim

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// eventFilter is the query of GET /events. A parameter that is present
// filters, even when empty: an empty value matches no event, since the
// Director compares it with its nulls.
type eventFilter struct {
	beforeID *int64 // only events with a smaller id
	afterNS  *int64 // only events at this unix nanosecond or later
	beforeNS *int64 // only events before this unix nanosecond
	fields   []func(*event) bool
}

func (f eventFilter) matches(e *event) bool {
	if (f.afterNS != nil && e.at < *f.afterNS) || (f.beforeNS != nil && e.at >= *f.beforeNS) {
		return false
	}
	for _, m := range f.fields {
		if !m(e) {
			return false
		}
	}
	return true
}

// eventFields are the parameters of GET /events that select a field by equality.
var eventFields = []struct {
	param string
	field func(*event) string
}{
	{"deployment", func(e *event) string { return e.deployment }},
	{"instance", func(e *event) string { return e.instance }},
	{"user", func(e *event) string { return e.user }},
	{"action", func(e *event) string { return e.action }},
	{"object_type", func(e *event) string { return e.objectType }},
	{"object_name", func(e *event) string { return e.objectName }},
}

// lastValue is the value of a query parameter as the Director's Rack reads
// it: the last one given.
func lastValue(q url.Values, key string) (string, bool) {
	vs, ok := q[key]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return vs[len(vs)-1], true
}

// parseEventFilter reads the query of GET /events; on a time it cannot read
// it returns the Director's message.
func parseEventFilter(q url.Values) (eventFilter, string) {
	var f eventFilter
	if v, ok := lastValue(q, "before_id"); ok {
		id := rubyToI(v)
		f.beforeID = &id
	}
	var invalid string
	if f.beforeNS, invalid = timeParam(q, "before_time", "before", 0); invalid != "" {
		return f, invalid
	}
	// after_time selects from the next second on, as the Director does.
	if f.afterNS, invalid = timeParam(q, "after_time", "after", int64(time.Second)); invalid != "" {
		return f, invalid
	}
	if v, ok := lastValue(q, "task"); ok {
		task, err := strconv.Atoi(v)
		canonical := err == nil && task > 0 && strconv.Itoa(task) == v
		f.fields = append(f.fields, func(e *event) bool { return canonical && e.task == task })
	}
	for _, ef := range eventFields {
		if v, ok := lastValue(q, ef.param); ok {
			field := ef.field
			f.fields = append(f.fields, func(e *event) bool { return v != "" && field(e) == v })
		}
	}
	return f, ""
}

// timeParam reads a time parameter, in unix nanoseconds plus shift; nil
// when absent. On a time it cannot read it returns the Director's message.
func timeParam(q url.Values, param, name string, shift int64) (*int64, string) {
	v, ok := lastValue(q, param)
	if !ok {
		return nil, ""
	}
	ns, err := parseEventTime(v)
	if err != nil {
		return nil, fmt.Sprintf("Invalid %s parameter: '%s' ", name, v)
	}
	ns = addClamped(ns, shift)
	return &ns, ""
}

// listEvents is GET /events: newest first, at most 200.
func (rec *recorder) listEvents(w http.ResponseWriter, r *http.Request, _ string) {
	f, invalid := parseEventFilter(r.URL.Query())
	if invalid != "" {
		// The Director sets the JSON content type before it reads the times.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(invalid))
		return
	}
	rec.db.mu.RLock()
	out := rec.db.events.list(f)
	rec.db.mu.RUnlock()
	writeJSON(w, http.StatusOK, out)
}

// rubyInteger is what Ruby's String#to_i reads: leading blanks, a sign,
// digits with single underscores between them.
var rubyInteger = regexp.MustCompile(`^[ \t\n\v\f\r]*([-+]?)([0-9]+(?:_[0-9]+)*)`)

// rubyToI reads s as Ruby's String#to_i does (0 when it starts with no
// number), the Director's reading of before_id, clamped to an int64.
func rubyToI(s string) int64 {
	m := rubyInteger.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1]+strings.ReplaceAll(m[2], "_", ""), 10, 64) // out of range: the nearest bound
	return n
}

// wholeNumber is the Director's test for a time given in unix seconds.
var wholeNumber = regexp.MustCompile(`^[-+]?[0-9]+$`)

// eventTimeLayouts are the times GET /events reads beside unix seconds.
// The Director reads anything Ruby's Time.parse does; these are the forms
// clients write: RFC 3339 and Ruby's own Time#to_s. A time without a zone is UTC.
var eventTimeLayouts = []string{
	time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05 UTC",
	"2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05", "2006-01-02",
}

// parseEventTime reads a before_time or after_time in unix nanoseconds.
func parseEventTime(v string) (int64, error) {
	if wholeNumber.MatchString(v) {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		if s > math.MaxInt64/int64(time.Second) || s < math.MinInt64/int64(time.Second) {
			return 0, fmt.Errorf("time %s is out of range", v)
		}
		return s * int64(time.Second), nil
	}
	for _, layout := range eventTimeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			if t.Year() < 1678 || t.Year() > 2261 { // beyond unix nanoseconds
				return 0, fmt.Errorf("time %s is out of range", v)
			}
			return t.UnixNano(), nil
		}
	}
	return 0, fmt.Errorf("time %q is not unix seconds, RFC 3339 or yyyy-mm-dd hh:mm:ss", v)
}

// addClamped is a+b, held at the int64 bounds.
func addClamped(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
