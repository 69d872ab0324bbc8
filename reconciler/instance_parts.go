package reconciler

import (
	"context"
	"encoding/json"
	"math"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Bounds of what the instance view reads of an instance's bindings and
// backups: one Vault read each.
const (
	maxBindingsShown = 100
	maxBackupsShown  = 20
)

// secretReader reads a secret under the mount; *vault.Secrets has it.
type secretReader interface {
	// Secret is the data at path and whether it exists.
	Secret(ctx context.Context, path string) (map[string]any, bool, error)
}

// InstanceBinding is one of an instance's bindings as the broker keeps it,
// without its credentials, secrets or parameters (never read out here).
type InstanceBinding struct {
	// BindingID is the platform's id of the binding.
	BindingID string `json:"binding_id"`
	// State is "bound", "binding" (a bind under way), "bind failed",
	// "unbinding", "unbind failed" (still bound), "unbound", "lost" (its
	// credentials are gone from Vault and could not be put back: Lost says
	// why) or "missing" (listed, no credentials in Vault, not yet found
	// lost by a run).
	State string `json:"state"`
	// AppGUID is the app it was made for, as the platform said ("": a
	// service key, or not said).
	AppGUID string `json:"app_guid,omitempty"`
	// Operation is its last asynchronous operation's type, state,
	// description, Director task and start (a per_binding plan's); nil: none.
	Operation *BindingOperation `json:"operation,omitempty"`
	// Lost says why its credentials are lost.
	Lost string `json:"lost,omitempty"`
}

// BindingOperation is a binding's asynchronous operation.
type BindingOperation struct {
	Type        string `json:"type"`
	State       string `json:"state"`
	Description string `json:"description,omitempty"`
	TaskID      int    `json:"task_id,omitempty"`
	StartedAt   string `json:"started_at,omitempty"`
}

// InstanceBackup says what one backup of an instance holds.
type InstanceBackup struct {
	// ID is the backup's id (what a restore takes).
	ID string `json:"id"`
	// TakenAt is when it was taken (RFC 3339), as it says.
	TakenAt string `json:"taken_at,omitempty"`
	// Holds are the documents it holds: "record", "metadata", "manifest".
	Holds []string `json:"holds"`
	// Secrets and Bindings count the secrets it holds and, of them, the
	// bindings' credentials (their paths and values are not shown).
	Secrets  int `json:"secrets"`
	Bindings int `json:"bindings"`
	// Removal says a deprovision or a removal took it.
	Removal bool `json:"removal,omitempty"`
	// Problem says why it could not be read (the rest is empty).
	Problem string `json:"problem,omitempty"`
}

// bindingsOf lists instance id's bindings (the first maxBindingsShown, in
// the order they were made), each with its state; lost are the run's lost
// bindings of it. The second result is how many it has.
func bindingsOf(ctx context.Context, secrets secretReader, id string, lost map[string]string, problems *[]string) ([]InstanceBinding, int) {
	out := []InstanceBinding{}
	if secrets == nil {
		return out, 0
	}
	list, _, err := secrets.Secret(ctx, id+"/binding-ids")
	if err != nil {
		*problems = append(*problems, "bindings list: "+err.Error())
		return out, 0
	}
	raw, _ := list["ids"].([]any)
	for _, v := range raw {
		bid, ok := v.(string)
		if !ok || bid == "" || strings.Contains(bid, "/") {
			continue
		}
		if len(out) == maxBindingsShown {
			break
		}
		b := InstanceBinding{BindingID: bid, Lost: lost[bid]}
		doc, found, err := secrets.Secret(ctx, id+"/bindings/"+bid)
		switch {
		case err != nil:
			b.State = "unknown"
			*problems = append(*problems, "binding "+bid+": "+err.Error())
		case !found && b.Lost != "":
			b.State = "lost"
		case !found:
			b.State = "missing"
		default:
			b.AppGUID, _ = doc["app_guid"].(string)
			b.Operation = bindingOperation(doc)
			b.State = bindingState(b.Operation)
			if b.Lost != "" {
				b.State = "lost"
			}
		}
		out = append(out, b)
	}
	return out, len(raw)
}

// bindingOperation reads a binding document's operation, nil when none.
func bindingOperation(doc map[string]any) *BindingOperation {
	m, ok := doc["operation"].(map[string]any)
	if !ok {
		return nil
	}
	op := &BindingOperation{}
	op.Type, _ = m["type"].(string)
	op.State, _ = m["state"].(string)
	op.Description, _ = m["description"].(string)
	op.StartedAt, _ = m["started_at"].(string)
	switch n := m["task_id"].(type) {
	case float64:
		if n > 0 && n <= math.MaxInt32 {
			op.TaskID = int(n)
		}
	case int:
		op.TaskID = n
	case json.Number:
		if t, err := n.Int64(); err == nil && t > 0 && t <= math.MaxInt32 {
			op.TaskID = int(t)
		}
	}
	if op.Type == "" {
		return nil
	}
	return op
}

// bindingState is what a binding's operation (nil: none) makes of it.
func bindingState(op *BindingOperation) string {
	if op == nil {
		return "bound"
	}
	switch op.Type + " " + op.State {
	case "bind " + vault.OperationInProgress:
		return "binding"
	case "bind " + vault.OperationFailed:
		return "bind failed"
	case "unbind " + vault.OperationInProgress:
		return "unbinding"
	case "unbind " + vault.OperationFailed:
		return "unbind failed"
	case "unbind " + vault.OperationSucceeded:
		return "unbound"
	}
	return "bound"
}

// backupsOf says what each of the newest maxBackupsShown backups (ids,
// newest first) holds.
func backupsOf(ctx context.Context, backups backupStore, id string, ids []string) []InstanceBackup {
	out := []InstanceBackup{}
	for _, bid := range ids[:min(len(ids), maxBackupsShown)] {
		b := InstanceBackup{ID: bid, Holds: []string{}}
		c, err := backups.BackupParts(ctx, id, bid)
		if err != nil {
			b.Problem = err.Error()
			out = append(out, b)
			continue
		}
		for _, part := range []struct {
			has  bool
			name string
		}{{c.Record, "record"}, {c.Metadata, "metadata"}, {c.Manifest, "manifest"}} {
			if part.has {
				b.Holds = append(b.Holds, part.name)
			}
		}
		b.TakenAt, b.Secrets, b.Removal = c.TakenAt, len(c.Secrets), c.Removal
		for _, p := range c.Secrets {
			if strings.HasPrefix(p, id+"/bindings/") {
				b.Bindings++
			}
		}
		out = append(out, b)
	}
	return out
}
