package broker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// What RecoverBindings says of a listed binding whose document was gone
// (the prefix of its outcome; the rest says from what, or why).
const (
	RecoveredFromBackup   = "restored from backup "
	RecoveredFromManifest = "restored from the manifest"
	RecoveredUnlisted     = "unlisted: it was unbound"
	RecoveredLost         = "lost: "
)

// maxBackupsSearched bounds the backups searched for one lost binding.
const maxBackupsSearched = 50

// RecoverBindings checks instance id's bindings, under its hold: each one
// listed whose credentials are gone from Vault is put back from the newest
// backup that holds them, or, for a per_binding plan, from the manifest
// Vault keeps (the one deployed), where the binding's user is declared
// (its username is derived from the ids; its password is beside it): its
// credentials are rendered again; a binding the history says was unbound is
// unlisted instead. Nothing is generated: new secrets would break the apps
// that use the old ones; a binding that cannot be put back is "lost: why".
// It answers how many bindings it checked and the outcome of each one that
// was gone, by binding id.
func (b *Broker) RecoverBindings(ctx context.Context, id string) (checked int, outcomes map[string]string, err error) {
	return b.recovery.check(ctx, id)
}

// recoverer puts an instance's lost bindings back (RecoverBindings).
type recoverer struct {
	catalog  *catalog.Catalog
	store    Store
	locks    *locker
	bindings *bindingStore
	binder   *binder
	history  *history
	log      *slog.Logger
}

// check is RecoverBindings: it checks instance id's bindings under its
// hold and puts each lost one back.
func (r *recoverer) check(ctx context.Context, id string) (checked int, outcomes map[string]string, err error) {
	if missing, n, err := r.anyMissing(ctx, id); err != nil || !missing {
		return n, nil, err // the common case: read only, no hold taken
	}
	ctx, unlock, err := r.locks.hold(ctx, id)
	if err != nil {
		return 0, nil, fmt.Errorf("taking the instance's hold: %w", err)
	}
	defer unlock()
	rec, err := r.store.Record(ctx, id)
	if err != nil || rec == nil {
		return 0, nil, err
	}
	ids, err := r.bindings.ids(ctx, id)
	if err != nil {
		return 0, nil, err
	}
	outcomes = map[string]string{}
	for _, bid := range ids {
		_, ok, err := r.store.Secret(ctx, bindingPath(id, bid))
		if err != nil {
			return checked, outcomes, fmt.Errorf("reading binding %s: %w", bid, err)
		}
		checked++
		if ok {
			continue
		}
		outcomes[bid] = r.one(ctx, id, bid, rec)
		r.log.Warn("a binding's credentials were gone from Vault", "instance", id, "binding", bid, "outcome", outcomes[bid])
	}
	return checked, outcomes, nil
}

// anyMissing says whether a listed binding of id has no document, and
// how many are listed.
func (r *recoverer) anyMissing(ctx context.Context, id string) (bool, int, error) {
	ids, err := r.bindings.ids(ctx, id)
	if err != nil {
		return false, 0, err
	}
	for _, bid := range ids {
		if _, ok, err := r.store.Secret(ctx, bindingPath(id, bid)); err != nil || !ok {
			return true, len(ids), err
		}
	}
	return false, len(ids), nil
}

// one puts one lost binding back, or says why it cannot.
func (r *recoverer) one(ctx context.Context, id, bid string, rec *vault.Record) string {
	if unbound, err := wasUnbound(ctx, r.store, id, bid); err != nil {
		return RecoveredLost + "its history could not be read: " + err.Error()
	} else if unbound {
		if err := r.bindings.list(ctx, id, bid, false); err != nil {
			return RecoveredLost + "it was unbound, and could not be unlisted: " + err.Error()
		}
		return RecoveredUnlisted
	}
	backups, err := r.store.Backups(ctx, id)
	if err != nil {
		return RecoveredLost + "its backups could not be listed: " + err.Error()
	}
	for _, backup := range backups[:min(len(backups), maxBackupsSearched)] {
		data, ok, err := r.store.BackupSecret(ctx, id, backup, bindingPath(id, bid))
		if err != nil || !ok {
			continue // an unreadable backup is skipped: an older one may hold it
		}
		if err := r.store.CreateSecret(ctx, bindingPath(id, bid), data); err != nil {
			return RecoveredLost + "could not be written back: " + err.Error()
		}
		r.history.bindingEvent(ctx, id, "binding_restored", rec.Deployment(id), bid)
		return RecoveredFromBackup + backup
	}
	_, plan, ok := r.catalog.Plan(rec.PlanID)
	if !ok || !plan.PerBinding() {
		return RecoveredLost + "no backup holds it (and its plan declares no user per binding in the manifest)"
	}
	return r.fromManifest(ctx, id, bid, rec, plan)
}

// fromManifest puts a per_binding binding back from the manifest Vault
// keeps: its user (named from the ids) and the password beside it.
func (r *recoverer) fromManifest(ctx context.Context, id, bid string, rec *vault.Record, plan catalog.Plan) string {
	text, ok, err := r.store.Manifest(ctx, id)
	switch {
	case err != nil:
		return RecoveredLost + "no backup holds it, and the manifest could not be read: " + err.Error()
	case !ok:
		return RecoveredLost + "no backup holds it, and Vault keeps no manifest of the instance"
	}
	var doc any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return RecoveredLost + "no backup holds it, and the manifest is not YAML"
	}
	user := bindingUsername(id, bid)
	password, found := passwordOf(doc, user, 0)
	if !found {
		return RecoveredLost + "no backup holds it, and the manifest declares no user " + user
	}
	binding := catalog.Binding{ID: bid, Secrets: map[string]any{"username": user, "password": password}}
	creds, err := r.binder.credentials(ctx, id, binding, "", rec, map[string]any{})
	if err != nil {
		return RecoveredLost + "its user is in the manifest, but its credentials could not be rendered again"
	}
	op := bindingOp{Type: bindOp, State: stateSucceeded, Description: "restored by the reconciler from the deployed manifest",
		StartedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	err = r.store.CreateSecret(ctx, bindingPath(id, bid), map[string]any{
		"credentials": creds, "secrets": binding.Secrets, "parameters": map[string]any{}, "app_guid": "",
		"created": time.Now().UTC().Format(time.RFC3339), "restored_from": "manifest", "operation": op.doc(),
	})
	if err != nil {
		return RecoveredLost + "could not be written back: " + err.Error()
	}
	r.history.bindingEvent(ctx, id, "binding_restored", rec.Deployment(id), bid)
	return RecoveredFromManifest
}

// passwordOf finds, in a manifest decoded from YAML, a mapping that holds
// user as a value and a string "password" beside it (at most 64 levels).
func passwordOf(v any, user string, depth int) (string, bool) {
	if depth > 64 {
		return "", false
	}
	switch n := v.(type) {
	case map[string]any:
		for _, val := range n {
			if s, ok := val.(string); ok && s == user {
				if p, ok := n["password"].(string); ok && p != "" {
					return p, true
				}
			}
		}
		for _, val := range n {
			if p, ok := passwordOf(val, user, depth+1); ok {
				return p, true
			}
		}
	case []any:
		for _, val := range n {
			if p, ok := passwordOf(val, user, depth+1); ok {
				return p, true
			}
		}
	}
	return "", false
}

// wasUnbound says whether the instance's history holds an unbind of bid.
func wasUnbound(ctx context.Context, h History, id, bid string) (bool, error) {
	events, err := h.Events(ctx, id, 0)
	if err != nil {
		return false, err
	}
	for _, e := range events {
		if e.Kind == eventUnbind && e.Details["binding_id"] == bid {
			return true, nil
		}
	}
	return false, nil
}
