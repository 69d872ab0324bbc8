package bosh

import (
	"strings"
	"testing"
)

// A task's texts come cut whatever the Director says; what is compared
// (its deployment, its context id) comes whole.
func TestTaskTextsAreBounded(t *testing.T) {
	huge := strings.Repeat("é<", 1<<19) // a megabyte and a half
	got := Task{ID: 7, Result: huge, Description: huge, User: huge, Deployment: "redis-1", ContextID: "blacksmith-x"}.bounded()
	for name, s := range map[string]string{"result": got.Result, "description": got.Description, "user": got.User} {
		if len(s) > maxErrorText || !strings.HasSuffix(s, "...") {
			t.Errorf("%s: %d bytes, not cut", name, len(s))
		}
	}
	if got.Deployment != "redis-1" || got.ContextID != "blacksmith-x" || got.ID != 7 {
		t.Errorf("compared fields changed: %+v", got)
	}
	short := Task{Result: "Error: deploy failed"}.bounded()
	if short.Result != "Error: deploy failed" {
		t.Errorf("a short result changed: %q", short.Result)
	}
}
