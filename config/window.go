package config

import (
	"fmt"
	"strings"
	"time"
)

// Window is a daily span of time in UTC, from Start to End minutes after
// midnight; End before Start passes midnight. The zero Window (Any) is
// every time of day.
type Window struct {
	// Any says the window is every time of day.
	Any bool
	// Start and End are minutes after midnight, UTC.
	Start, End int
}

// maxWindowText bounds the text ParseWindow reads.
const maxWindowText = 32

// ParseWindow reads "HH:MM-HH:MM" (24-hour clock, UTC); "" is any time. A
// window that starts when it ends is refused (it would be empty or the
// whole day: write "" for the whole day).
func ParseWindow(s string) (Window, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Window{Any: true}, nil
	}
	if len(s) > maxWindowText {
		return Window{}, fmt.Errorf("must be HH:MM-HH:MM (UTC), got a text of %d bytes", len(s))
	}
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return Window{}, fmt.Errorf("must be HH:MM-HH:MM (UTC), got %q", s)
	}
	start, err := minuteOfDay(from)
	if err != nil {
		return Window{}, fmt.Errorf("must be HH:MM-HH:MM (UTC), got %q: %v", s, err)
	}
	end, err := minuteOfDay(to)
	if err != nil {
		return Window{}, fmt.Errorf("must be HH:MM-HH:MM (UTC), got %q: %v", s, err)
	}
	if start == end {
		return Window{}, fmt.Errorf("%q starts when it ends: leave it empty for any time of day", s)
	}
	return Window{Start: start, End: end}, nil
}

// minuteOfDay reads "HH:MM".
func minuteOfDay(s string) (int, error) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a time HH:MM", s)
	}
	return t.Hour()*60 + t.Minute(), nil
}

// Contains says whether t (in any zone) falls inside the window.
func (w Window) Contains(t time.Time) bool {
	if w.Any {
		return true
	}
	u := t.UTC()
	m := u.Hour()*60 + u.Minute()
	if w.Start < w.End {
		return m >= w.Start && m < w.End
	}
	return m >= w.Start || m < w.End
}

// String is the window as configured ("" for any time).
func (w Window) String() string {
	if w.Any {
		return ""
	}
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.Start/60, w.Start%60, w.End/60, w.End%60)
}
