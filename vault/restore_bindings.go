package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The broker's layout of an instance's bindings, which a restore keeps
// true: each binding's document at {id}/bindings/{bid}, their list at
// {id}/binding-ids ({"ids": [...]}), and the history events "bind" and
// "unbind" whose detail binding_id names the binding.
const (
	bindingsFolder   = "bindings/"
	bindingsListName = "binding-ids"
	eventBind        = "bind"
	eventUnbind      = "unbind"
)

// BindingRestore is what a restore did with one binding.
type BindingRestore struct {
	BindingID string `json:"binding_id"`
	// Outcome is "restored" (the backup's document written: it was gone),
	// "kept" (its live document left as it is), "skipped" (the backup's
	// document not written: the binding was unbound since) or "listed"
	// (made after the backup: kept, and kept in the list).
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}

// RestoreReport says what a restore did with the instance's bindings.
type RestoreReport struct {
	Bindings []BindingRestore `json:"bindings,omitempty"`
}

// bindingOf is the binding id of a secret path of id, "" for another path.
func bindingOf(id, path string) string {
	bid, ok := strings.CutPrefix(path, id+"/"+bindingsFolder)
	if !ok || strings.Contains(bid, "/") {
		return ""
	}
	return bid
}

// unboundIn are the bindings whose last bind or unbind event in events
// (newest first, as Events answers) is an unbind.
func unboundIn(events []Event) map[string]bool {
	out := map[string]bool{}
	for _, e := range slices.Backward(events) { // oldest first
		bid := e.Details["binding_id"]
		switch {
		case bid == "":
		case e.Kind == eventUnbind:
			out[bid] = true
		case e.Kind == eventBind:
			delete(out, bid)
		}
	}
	return out
}

// bindingTruth changes the backup's secrets (b.secrets) so that its
// restore keeps the bindings' truth: a binding the history says was
// unbound is not brought back, a live binding's document is not
// overwritten by an older one, and the list holds the backup's bindings
// and the live ones, less the unbound. live are the secrets of id now.
func bindingTruth(id string, b *backupParts, live map[string]json.RawMessage, events []Event, whole bool) (RestoreReport, error) {
	var rep RestoreReport
	if b.secrets == nil {
		return rep, nil
	}
	unbound := unboundIn(events)
	listPath := id + "/" + bindingsListName
	ids := map[string]bool{}
	for _, raw := range []json.RawMessage{b.secrets[listPath], live[listPath]} {
		for _, bid := range listed(raw) {
			ids[bid] = true
		}
	}
	for p := range b.secrets {
		if bid := bindingOf(id, p); bid != "" {
			ids[bid] = true
		}
	}
	for p := range live {
		if bid := bindingOf(id, p); bid != "" {
			ids[bid] = true
		}
	}
	var list []string
	for _, bid := range slices.Sorted(maps.Keys(ids)) {
		p := id + "/" + bindingsFolder + bid
		_, inBackup := b.secrets[p]
		_, isLive := live[p]
		switch {
		case unbound[bid]:
			delete(b.secrets, p)
			if inBackup {
				rep.Bindings = append(rep.Bindings, BindingRestore{bid, "skipped", "unbound since the backup (the history's last event of it is an unbind): not brought back"})
			}
			continue
		case isLive && inBackup:
			delete(b.secrets, p)
			rep.Bindings = append(rep.Bindings, BindingRestore{bid, "kept", "its live document is the truth: not overwritten by the backup's"})
		case isLive:
			rep.Bindings = append(rep.Bindings, BindingRestore{bid, "listed", "made after the backup: kept"})
		case inBackup && !whole:
			delete(b.secrets, p)
			rep.Bindings = append(rep.Bindings, BindingRestore{bid, "skipped", "the history could not be read whole, so whether it " +
				"was unbound is unknown: not brought back (its document is in the backup)"})
			continue
		case inBackup:
			rep.Bindings = append(rep.Bindings, BindingRestore{bid, "restored", "gone from Vault: the backup's document written back"})
		default:
			rep.Bindings = append(rep.Bindings, BindingRestore{bid, "listed", "listed without a document (the bindings' check reports it)"})
		}
		list = append(list, bid)
	}
	if _, had := b.secrets[listPath]; had || live[listPath] != nil || len(list) > 0 {
		raw, err := json.Marshal(map[string]any{"ids": list})
		if err != nil {
			return rep, fmt.Errorf("writing the list of bindings: %w", err)
		}
		b.secrets[listPath] = raw
	}
	return rep, nil
}

// listed are the ids of a binding list document ({"ids": [...]}).
func listed(raw json.RawMessage) []string {
	var doc struct {
		IDs []any `json:"ids"`
	}
	if raw == nil || json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	var out []string
	for _, v := range doc.IDs {
		if s, ok := v.(string); ok && s != "" && !strings.Contains(s, "/") {
			out = append(out, s)
		}
	}
	return out
}

// restoreBindingsTruth reads what bindingTruth needs and applies it to b.
func (rt *Restores) restoreBindingsTruth(ctx context.Context, id string, b *backupParts) (RestoreReport, error) {
	if b.secrets == nil {
		return RestoreReport{}, nil
	}
	live, err := rt.reader.readSecrets(ctx, id)
	if err != nil {
		return RestoreReport{}, fmt.Errorf("reading the live bindings: %w", err)
	}
	events, err := rt.history.Events(ctx, id, 0)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return RestoreReport{}, fmt.Errorf("reading the history (the bindings unbound): %w", err)
	}
	return bindingTruth(id, b, live, events, err == nil)
}
