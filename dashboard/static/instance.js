// The instance page's bindings and backups, and the restore of a backup
// (after a confirmation) through the operator's POST
// /b/instances/{id}/restore: app.js's helpers, every value shown as text.
"use strict";

// bindingStates are the badge classes of a binding's states.
const bindingStates = { bound: "success", binding: "running", unbinding: "running", unbound: "idle",
  "bind failed": "failure", "unbind failed": "failure", lost: "failure", missing: "failure", unknown: "partial" };

// renderInstanceBindings lists the instance's bindings (the first 100 of
// total), each with its state, the app it was made for and its last
// operation; never their credentials (the view holds none).
function renderInstanceBindings(list, total) {
  list = list || [];
  total = total || list.length;
  $("bindings-count").textContent = "(" + total + ")";
  $("bindings-more").textContent = total > list.length ? "The first " + list.length + " of " + total + ", in the order they were made." : "";
  rows("bindings", list, (b) => [b.binding_id, bindingState(b), b.app_guid || el("span", "none (a service key, or not said)", "muted"),
    bindingOperation(b.operation)], "no binding");
}

// bindingState is a binding's state as a badge, and why it is lost.
function bindingState(b) {
  const cell = el("span");
  cell.append(el("span", b.state, "badge " + (bindingStates[b.state] || "partial")));
  if (b.lost) cell.append(document.createTextNode(" "), el("span", b.lost, "muted"));
  return cell;
}

// bindingOperation is a binding's last asynchronous operation in a line.
function bindingOperation(op) {
  if (!op) return "";
  return [op.type + " " + op.state, op.task_id ? "task " + op.task_id : "", when(op.started_at), op.description]
    .filter(Boolean).join(", ");
}

// restoring is the backup the confirmation asks about (null: none asked).
let restoring = null;

// renderBackups lists the instance's backups (ids, newest first), each as
// the date it was taken with what it holds (contents: the newest 20's) and
// a button that asks to restore it.
function renderBackups(ids, contents) {
  const byID = new Map((contents || []).map((c) => [c.id, c]));
  $("backups-count").textContent = "(" + ids.length + ")";
  rows("backups", ids, (id) => {
    const c = byID.get(id);
    const btn = el("button", "Restore…", "secondary");
    btn.type = "button";
    btn.dataset.acts = "";
    btn.addEventListener("click", () => askRestore({ id: id, c: c }));
    return [takenText(id, c), holdsText(c), btn];
  }, "no backup");
}

// takenText is when a backup was taken, as a date, with its id.
function takenText(id, c) {
  const at = c && when(c.taken_at);
  return at ? at + " (" + id + ")" : backupWhen(id);
}

// holdsText says what a backup holds: its documents, how many secrets and
// bindings' credentials (never which or what), whether a removal took it.
function holdsText(c) {
  if (!c) return "not read (only the newest 20 are)";
  if (c.problem) return "could not be read: " + c.problem;
  const parts = (c.holds || []).slice();
  if (c.secrets) parts.push(counted(c.secrets, "secret", "secrets") + (c.bindings ? " (" + counted(c.bindings, "binding's", "bindings'") + " credentials)" : ""));
  if (!parts.length) parts.push("nothing");
  return parts.join(", ") + (c.removal ? "; taken when the instance was removed" : "");
}

// askRestore shows the confirmation of the restore of backup b ({id, c});
// null hides it.
function askRestore(b) {
  restoring = b;
  const box = $("restore-confirm");
  box.hidden = !b;
  $("restore-redeploy").checked = false;
  $("restore-error").hidden = true;
  if (!b) return;
  $("restore-done").hidden = true;
  $("restore-question").textContent = shown("Restore instance " + instanceID() + " from the backup taken " + takenText(b.id, b.c) +
    "? Vault's records of the instance become what the backup holds (" + holdsText(b.c) + "); the state before is backed up first, " +
    "to undo it. Without redeploy BOSH is not touched, and the next run records what the deployment runs.");
  $("restore-yes").focus();
}

// restoreConfirmed restores the backup asked about, through the operator's
// restore (the reconciler's rollback: the run lock, the instance's hold,
// a backup of the state before), and says what it did.
async function restoreConfirmed() {
  if (!restoring) return;
  const btn = $("restore-yes");
  btn.disabled = true;
  const params = new URLSearchParams({ backup: restoring.id });
  if ($("restore-redeploy").checked) params.set("redeploy", "true");
  try {
    const r = await getJSON(api("/b/instances/" + encodeURIComponent(instanceID()) + "/restore?" + params.toString()), { method: "POST" });
    askRestore(null);
    const done = $("restore-done");
    done.textContent = shown(restoredText(r));
    done.hidden = false;
    loadInstance();
  } catch (e) {
    const p = $("restore-error");
    p.textContent = shown("Restore: " + e.message);
    p.hidden = false;
  } finally {
    btn.disabled = false;
  }
}

// restoredText is what a restore did, in a sentence or two.
function restoredText(r) {
  let s = "Restored from backup " + r.backup + (r.redeployed ? ", its manifest deployed first (task " + r.task_id + ")" : "") + ".";
  if (r.safety_backup) s += " The state before is in backup " + r.safety_backup + ".";
  if (r.note) s += " " + r.note;
  const b = (r.bindings || []).map((x) => x.binding_id + ": " + x.outcome).join(", ");
  return b ? s + " Bindings: " + b + "." : s;
}
