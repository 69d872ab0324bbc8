package upgrade

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The quarantine, however many instances fail and however long their ids
// and reasons, stays within a state document's bounds, keeping the entries
// whose wait ends last.
func TestQuarantineStaysWithinAStateDocument(t *testing.T) {
	now := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	for _, idLength := range []int{36, 255} {
		doc := journalDoc{InFlight: map[string]*report.UpgradeEntry{}, Quarantine: map[string]*report.UpgradeQuarantined{}}
		for i := range 2000 {
			id := fmt.Sprintf("%0*d", idLength, i)
			doc.Quarantine[id] = &report.UpgradeQuarantined{InstanceID: id, Failures: 12, Version: "16.1.0-rc.1", State: "rollback_failed",
				Reason: cut(strings.Repeat("\u202e<script>", 400)), Since: now, NextAttempt: now.Add(time.Duration(i) * time.Minute)}
			trimQuarantine(doc.Quarantine)
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > vault.MaxStateBytes {
			t.Errorf("ids of %d characters: the journal is %d bytes, over %d", idLength, len(data), vault.MaxStateBytes)
		}
		if idLength == 36 && len(doc.Quarantine) < 100 { // reasons of escaped characters: some 1.2 KB each
			t.Errorf("ids of %d characters: only %d entries kept", idLength, len(doc.Quarantine))
		}
		last := fmt.Sprintf("%0*d", idLength, 1999)
		if doc.Quarantine[last] == nil {
			t.Errorf("ids of %d characters: the entry whose wait ends last was dropped", idLength)
		}
	}
}
