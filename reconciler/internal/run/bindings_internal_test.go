package run

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Lost bindings kept as takeOutcomes keeps them, however many and however
// hostile their ids and reasons, leave the document within a state
// document's bounds.
func TestLostBindingsStayWithinAStateDocument(t *testing.T) {
	for _, text := range []string{"the backup holds no credentials", strings.Repeat("<\u202e&", 1000)} {
		doc := BindingsDoc{Cursor: strings.Repeat("c", 255), Lost: map[string]map[string]string{}}
		size, kept := 0, 0
		for i := range 20_000 {
			id, bid := fmt.Sprintf("%0255d", i/5), fmt.Sprintf("%0255d", i)
			reason := report.Truncate(text, maxLostReason)
			if size+lostBytes(id, bid, reason) > maxLostBytes {
				continue
			}
			size += lostBytes(id, bid, reason)
			if doc.Lost[id] == nil {
				doc.Lost[id] = map[string]string{}
			}
			doc.Lost[id][bid] = reason
			kept++
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > vault.MaxStateBytes {
			t.Errorf("%d lost bindings kept in %d bytes, over %d", kept, len(data), vault.MaxStateBytes)
		}
		if size != lostSize(doc.Lost) {
			t.Errorf("the size counted (%d) is not lostSize's (%d)", size, lostSize(doc.Lost))
		}
		if kept < 100 { // ids of 255 characters and reasons all escapes: some 1.3 KB each
			t.Errorf("only %d kept", kept)
		}
	}
}
