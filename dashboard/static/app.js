// The blacksmith dashboard: reads the operator's JSON endpoints and renders
// every value as text (textContent), never as HTML, with the characters
// that hide or reorder text shown escaped (shown).
"use strict";

const $ = (id) => document.getElementById(id);

// hidden are the characters a Director's content could use to hide text or
// make it read otherwise: every control and format character (\p{Cc},
// \p{Cf}: zero-width characters, bidirectional marks, embeddings, overrides
// and isolates, tags...) but tab and line feed, line and paragraph
// separators, private-use and unassigned code points, and the characters
// that draw nothing though they are letters or symbols (fillers, variation
// selectors, the blank braille pattern, the object replacement character).
const hidden = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2800\u3164\uFE00-\uFE0F\uFFA0\uFFFC\u{E0100}-\u{E01EF}]/gu;

// shown is v as text, each hidden character written as its escape
// (\u202E, \u{E0041}).
function shown(v) {
  return String(v).replace(hidden, (c) => {
    if (c === "\t" || c === "\n") return c;
    const hex = c.codePointAt(0).toString(16).toUpperCase();
    return hex.length > 4 ? "\\u{" + hex + "}" : "\\u" + hex.padStart(4, "0");
  });
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = shown(text);
  if (cls) e.className = cls;
  return e;
}

function link(href, text) {
  const a = el("a", text);
  a.href = href;
  return a;
}

function when(t) {
  if (!t) return "";
  const d = new Date(t);
  return isNaN(d) || d.getFullYear() < 2000 ? "" : d.toLocaleString();
}

// backupWhen is a backup's id (the Unix second it was taken) as a date,
// with the id an operator passes to restore; another id as it is.
function backupWhen(id) {
  if (!/^[0-9]{9,11}$/.test(id)) return id;
  const at = when(Number(id) * 1000);
  return at ? at + " (" + id + ")" : id;
}

function secs(s) {
  return s === undefined ? "" : s < 10 ? s.toFixed(2) + " s" : Math.round(s) + " s";
}

// span is a length of time in seconds in its two largest units: "3h12m",
// "45s", "24h"; days from two on: "2d4h".
function span(s) {
  s = Math.max(0, Math.floor(s));
  const units = [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]].filter(([u]) => u !== "d" || s >= 2 * 86400);
  const counts = units.map(([u, size]) => { const n = Math.floor(s / size); s -= n * size; return [u, n]; });
  const first = counts.findIndex(([, n]) => n > 0);
  if (first < 0) return "0s";
  return counts.slice(first, first + 2).filter(([, n]) => n > 0).map(([u, n]) => n + u).join("");
}

// since is when t was, and for how long: "5/11/2026, 03:14:00 (for 3h12m)".
function since(t) {
  const at = when(t);
  return at ? at + " (for " + span((Date.now() - new Date(t)) / 1000) + ")" : "";
}

// rows fills the tbody of table id with one row per item (cells(item) gives
// the cells: strings or nodes); empty says what none means.
function rows(id, items, cells, empty) {
  const body = $(id).tBodies[0];
  body.replaceChildren();
  if (!items || items.length === 0) {
    const td = el("td", empty || "none", "empty");
    td.colSpan = $(id).tHead.rows[0].cells.length;
    const tr = el("tr");
    tr.append(td);
    body.append(tr);
    return;
  }
  for (const it of items) {
    const tr = el("tr");
    for (const c of cells(it)) {
      const td = el("td");
      if (c instanceof Node) td.append(c); else td.textContent = c === undefined || c === null ? "" : shown(c);
      tr.append(td);
    }
    body.append(tr);
  }
}

function facts(id, pairs) {
  const dl = $(id);
  dl.replaceChildren();
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === "") continue;
    dl.append(el("dt", k));
    const dd = el("dd");
    if (v instanceof Node) dd.append(v); else dd.textContent = shown(v);
    dl.append(dd);
  }
  if (!dl.children.length) dl.append(el("dd", "none", "empty"));
}

// root is the path the daemon's root is served under, taken from the
// page's own path (everything before /dashboard): "" at the origin's root,
// "/blacksmith" behind a reverse proxy that serves the daemon under
// /blacksmith/.
const root = (() => {
  const page = document.body.dataset.page === "instance" ? /^(.*)\/dashboard\/instances\/[^/]*$/ : /^(.*)\/dashboard\/?$/;
  const m = location.pathname.match(page);
  return m ? m[1] : "";
})();

// api is the URL of the operator's endpoint path ("/b/reconcile"): from
// location.origin, never relative to the page's URL, which may hold the
// credentials the page was opened with (http://user:pass@host/dashboard),
// and fetch() refuses a URL that includes credentials.
function api(path) {
  return location.origin + root + path;
}

// page is the link to the dashboard's page path ("/dashboard/instances/a1"),
// under the root.
function page(path) {
  return root + path;
}

function instanceLink(id) {
  return id ? link(page("/dashboard/instances/" + encodeURIComponent(id)), id) : "";
}

function showError(err) {
  const p = $("error");
  if (!p) return;
  p.hidden = !err;
  p.textContent = err ? shown(err) : "";
}

// getJSON fetches an operator's endpoint; the role its answer names
// (X-Blacksmith-Role: admin or viewer) marks the page, whose buttons that
// act a viewer does not see (style.css).
async function getJSON(url, opts) {
  const res = await fetch(url, Object.assign({ credentials: "same-origin", headers: { Accept: "application/json" } }, opts || {}));
  const role = res.headers.get("X-Blacksmith-Role");
  if (role === "admin" || role === "viewer") document.body.dataset.role = role;
  let body = null;
  try { body = await res.json(); } catch (e) { body = null; }
  if (!res.ok && res.status !== 202) {
    throw new Error((body && (body.description || body.error)) || res.status + " " + res.statusText);
  }
  return body;
}

// ---- overview ----

let pollTimer = null;

function schedule(running) {
  clearTimeout(pollTimer);
  pollTimer = setTimeout(refresh, running ? 1000 : 5000);
}

// refresh reads the status and the fleet upgrades at once (each card shows
// its own error) and polls again, sooner while either runs.
async function refresh() {
  const running = await Promise.all([refreshStatus(), refreshUpgrades()]);
  schedule(running.some(Boolean));
}

// refreshStatus renders the reconciler's status and runs; true while a run runs.
async function refreshStatus() {
  try {
    const [st, runs] = await Promise.all([getJSON(api("/b/reconcile")), getJSON(api("/b/runs?limit=10"))]);
    renderStatus(st);
    renderRuns(runs && runs.runs);
    renderDrift(st.last_run, runs && runs.runs);
    showError(null);
    return st.running;
  } catch (e) {
    showError(e.message);
    return false;
  }
}

function renderStatus(st) {
  const state = $("run-state");
  state.textContent = st.running ? "running" : st.enabled ? "idle" : "disabled";
  state.className = "badge " + (st.running ? "running" : "idle");
  state.dataset.state = state.textContent;
  $("run-phase").textContent = st.running ? st.phase + " · " + st.progress.done + " / " + st.progress.total : "";
  const bar = $("run-progress");
  bar.hidden = !st.running;
  bar.max = Math.max(1, st.progress.total);
  bar.value = st.progress.done;
  $("converged").textContent = st.last_run ? (st.converged ? "Converged: nothing to write, nothing failing, nothing unexplained." : "Not converged:") : "No run yet.";
  const ul = $("blockers");
  ul.replaceChildren(...(st.blockers || []).map((b) => el("li", b)));
  $("run-now").disabled = st.running;

  const r = st.last_run;
  if (r) {
    const result = el("span", r.result, "badge " + r.result);
    facts("last-run", [
      ["result", result], ["started", when(r.started_at)], ["reason", r.reason], ["scope", r.scope ? JSON.stringify(r.scope) : ""],
      ["duration", secs(r.duration_seconds)], ["deployments", r.deployments_seen], ["matched", r.matched],
      ["created / updated", r.created + " / " + r.updated], ["orphaned / unorphaned", r.orphaned + " / " + r.unorphaned],
      ["drift", r.drift], ["Vault writes", r.writes], ["manifests fetched", r.manifests_fetched],
      ["unknown (Director not listed)", r.unknown || 0],
      ["event feed", r.feed ? r.feed.mode + (r.feed.reason ? " (" + r.feed.reason + ")" : "") : ""],
      ["VM health", healthFacts(r.health)],
      ["outdated", outdatedFacts(r.outdated)],
      ["errors", r.error_count ? r.error_count + ": " + (r.errors || []).slice(0, 3).join("; ") : "0"],
    ]);
  } else {
    facts("last-run", []);
  }
  if (r && r.directors && r.directors.length) { // several Directors: one row each
    rows("directors", r.directors, (d) => [d.name, d.listed ? d.deployments : "not listed: " + (d.error || ""),
      d.feed ? d.feed.mode + (d.feed.reason ? " (" + d.feed.reason + ")" : "") : "", r.result]);
  } else {
    rows("directors", r ? [r] : [], (x) => ["default", x.deployments_seen, x.feed ? x.feed.mode : "", x.result], "no run yet");
  }
  $("orphans-count").textContent = "(" + st.orphans.length + ")";
  rows("orphans", st.orphans, (o) => [instanceLink(o.instance_id), o.deployment, when(o.orphaned_at)]);
  const unmatched = st.unmatched.filter((u) => !u.foreign), foreign = st.unmatched.filter((u) => u.foreign);
  $("unmatched-count").textContent = "(" + unmatched.length + ")";
  rows("unmatched", unmatched, (u) => [u.deployment, u.reason]);
  $("foreign-count").textContent = "(" + foreign.length + ")";
  rows("foreign", foreign, (u) => [u.deployment, u.reason]);
  $("conflicts-count").textContent = "(" + st.conflicts.length + ")";
  rows("conflicts", st.conflicts, (c) => [instanceLink(c.instance_id), c.winner, c.loser]);
  $("quarantined-count").textContent = "(" + st.quarantined.length + ")";
  rows("quarantined", st.quarantined, (q) => [q.instance_id ? instanceLink(q.instance_id) : q.deployment, q.failures, when(q.next_attempt), q.last_error]);
  renderHealth(st.health || { unhealthy: 0, instances: [], sweep_seconds: 0 });
  renderOutdated(st.outdated, r);
  renderPlatform(st.platform);
  renderBindings(st.bindings);
}

// renderHealth lists the unhealthy instances, longest unhealthy first (the
// status holds the first 100).
function renderHealth(h) {
  const listed = h.instances || [];
  $("unhealthy-count").textContent = "(" + h.unhealthy + ")";
  $("unhealthy-more").textContent = h.unhealthy > listed.length ? "The " + listed.length + " longest unhealthy of " + h.unhealthy + "." : "";
  const empty = h.sweep_seconds > 0 ? "every VM running when last asked; sweep every " + span(h.sweep_seconds)
    : "none found unhealthy; health sweep off (only the deployments instance, VM and alert events name are asked)";
  rows("unhealthy", listed, (u) => [instanceLink(u.instance_id), u.deployment, sinceCell(u), vmList(u.vms)], empty);
  $("health-loop").textContent = loopFacts(h.loop);
}

// sinceCell is since when an instance is unhealthy, and when it was last asked.
function sinceCell(u) {
  const cell = el("span");
  cell.append(el("span", since(u.since)), el("br"), el("span", "asked " + when(u.checked_at), "muted"));
  return cell;
}

// vmList is the VMs that do not run, one a line: "group/index (id): job
// state (failing processes)", each value the Director's, shown as text.
function vmList(vms) {
  const ul = el("ul", null, "vms");
  for (const v of vms || []) {
    const li = el("li");
    li.append(el("span", v.instance, "vm"), document.createTextNode(": "), el("span", v.job_state, "state"));
    if (v.failing && v.failing.length) {
      li.append(document.createTextNode(" ("), el("span", v.failing.join(", "), "failing"), document.createTextNode(")"));
    }
    if (v.vm_cid) li.append(document.createTextNode(" "), el("span", "VM " + v.vm_cid, "muted"));
    ul.append(li);
  }
  return ul;
}

// healthFacts is what the last run handed the health loop.
function healthFacts(h) {
  if (!h) return "";
  let s = "handed " + h.handed + " deployments to the health loop (" + h.named + " named by events";
  if (h.busy) s += ", " + h.busy + " busy";
  s += ")";
  if (h.gone) s += ", " + h.gone + " gone";
  return s + "; " + h.unhealthy + " unhealthy";
}

// loopFacts is what the health loop does on each Director, a line each.
function loopFacts(l) {
  if (!l || !l.leading) return "health loop: not running here (this daemon does not lead)";
  const lines = (l.directors || []).map((d) => d.director + ": " + d.in_flight + " vm-state task(s) running (at most " + l.tasks_at_once +
    ", most " + d.most_at_once + "); sweep " + d.sweep + " left of a slot share of " + d.slot_share + ", " + d.first + " to ask first; " +
    d.checked + " asked, " + d.failed + " not answered" + (d.held_off ? ", held off " + d.held_off + " times for the broker's tasks" : "") +
    (d.last_check ? "; last asked " + when(d.last_check) : ""));
  return "health loop: " + (lines.length ? lines.join(" | ") : "no Director");
}

// renderOutdated lists the instances behind their plan's maintenance_info
// version, oldest version first (the status holds the first 100). o is
// absent when not looked for: no plan declares maintenance_info, or no run
// over every deployment got that far; r is the last run.
function renderOutdated(o, r) {
  const listed = (o && o.instances) || [];
  $("outdated-count").textContent = o ? "(" + o.count + ")" : "";
  $("outdated-plans").textContent = o && o.by_plan ? shown("by plan: " + byPlan(o.by_plan)) : "";
  $("outdated-more").textContent = o && o.count > listed.length ? "The " + listed.length + " oldest of " + o.count + "." : "";
  const empty = o ? "every instance runs its plan's version" : !r ? "no run yet"
    : !r.scope && r.result !== "failure" ? "no plan declares maintenance_info"
      : "none reported: no plan declares maintenance_info, or no run over every deployment got that far";
  rows("outdated", listed, (x) => [adoptedLink(x), x.deployment, x.plan_id, version(x.version), x.want], empty);
  renderBehind(o && o.behind);
}

// renderBehind lists the instances that ask for the latest of a release or
// stemcell while their Director has a newer one uploaded than they run (the
// first 100, by id); b is absent when no instance asks for a latest.
function renderBehind(b) {
  const listed = (b && b.instances) || [];
  $("behind-count").textContent = b ? "(" + b.count + ")" : "";
  let facts = "";
  if (b) {
    facts = b.asking + " ask for a latest";
    if (b.unknown) facts += ", " + b.unknown + " not known to the last run";
    if (b.count > listed.length) facts += "; the first " + listed.length + " of " + b.count;
    if (b.errors && b.errors.length) facts += "; could not ask: " + b.errors.join("; ");
  }
  $("behind-facts").textContent = shown(facts);
  rows("behind", listed, (x) => [instanceLink(x.instance_id), x.deployment, x.plan_id,
    (x.lags || []).map((l) => l.type + " " + l.name + " " + l.running + " → " + l.newest).join(", ")],
  b ? "every instance asking for a latest runs it" : "no instance asks for a latest release or stemcell");
}

// byPlan is the count of each plan (or state), the most first: "redis-small 3 · redis-large 0".
function byPlan(counts) {
  return Object.entries(counts).sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0))
    .map(([plan, n]) => plan + " " + n).join(" · ");
}

// adoptedLink is an instance's link, marked when the reconciler adopted it
// (no broker deployed it, so no version was recorded).
function adoptedLink(x) {
  const cell = el("span");
  cell.append(instanceLink(x.instance_id));
  if (x.adopted) cell.append(document.createTextNode(" "), el("span", "adopted", "badge adopted"));
  return cell;
}

// version is a recorded maintenance_info version, or "unknown" (muted, not
// to be read as a version) when none was recorded.
function version(v) {
  return v ? v : el("span", "unknown", "muted");
}

// outdatedFacts is what the last run found of the instances behind their plan.
function outdatedFacts(o) {
  if (!o) return "";
  return o.count + " behind their plan's version" + (o.by_plan && Object.keys(o.by_plan).length ? " (" + byPlan(o.by_plan) + ")" : "");
}

// ---- platform ----

// platformCounts are the states the card counts, in order: [label, key,
// shown at 0]. The orphan deployments and the platform-only instances are
// what the cross-check is for: always shown; the others only when some are.
const platformCounts = [["in step", "in_step", true], ["orphan deployments", "orphan_deployment", true],
  ["platform only", "platform_only", true], ["orphans the platform has", "orphan", false],
  ["orphans the platform lacks too", "absent", false], ["creating on the platform", "creating", false],
  ["not the platform's to judge", "not_the_platforms", false]];

// renderPlatform shows the instances held against the platform's (the Cloud
// Controller's) by the last complete run; p absent: no platform configured,
// no card. Names, organizations and spaces are the platform's, deployments
// and Directors Vault's: every value goes through shown (rows, facts, el).
function renderPlatform(p) {
  $("platform-card").hidden = !p;
  if (!p) return;
  const known = p.state === "known";
  const counts = p.counts || {};
  $("platform-state").replaceChildren(el("span", p.state, "badge " + (known ? "success" : "partial")),
    document.createTextNode(" "), platformState(p));
  $("platform-counts").hidden = !known;
  facts("platform-counts", known ? platformCounts.map(([label, key, always]) => [label, counts[key] || (always ? 0 : "")])
    .concat([["not judged", p.unchecked ? p.unchecked + " (Director out of the run, too young, created after the read or busy)" : ""]]) : []);
  $("platform-read").textContent = shown(platformRead(p, known));
  $("platform-refused").hidden = !p.refused;
  $("platform-refused").textContent = p.refused ? shown("Orphan deployments not stopped or deleted: " + p.refused) : "";
  const unjudged = "not judged: the platform is unknown";
  const orphans = p.orphan_deployments || [];
  $("platform-orphans-count").textContent = known ? "(" + (counts.orphan_deployment || 0) + ")" : "";
  $("platform-orphans-more").textContent = firstOf(orphans.length, counts.orphan_deployment);
  rows("platform-orphans", orphans, (x) => [instanceLink(x.instance_id), x.deployment, x.director || el("span", "default", "muted"),
    since(x.absent_since), x.reads, retiring(x)], known ? "none: the platform has every instance Vault and the Directors have" : unjudged);
  const only = p.platform_only || [];
  $("platform-only-count").textContent = known ? "(" + (counts.platform_only || 0) + ")" : "";
  $("platform-only-more").textContent = firstOf(only.length, counts.platform_only);
  rows("platform-only", only, (x) => {
    const rec = x.platform || {};
    return [instanceLink(x.instance_id), rec.name, [rec.organization, rec.space].filter(Boolean).join(" / "),
      [rec.last_operation, when(rec.updated_at)].filter(Boolean).join(", "), restorable(x.restorable)];
  }, known ? "none: Vault has every instance the platform has" : unjudged);
  const deleted = [...(p.stopped || []), ...(p.started || []), ...(p.deleted || [])];
  $("platform-deleted-part").hidden = !deleted.length;
  $("platform-deleted-count").textContent = "(" + deleted.length + ")";
  $("platform-deleted").replaceChildren(...deleted.map(remediated));
}

// platformState is when the platform was read whole, or why it is unknown
// (a warning: nothing is judged from it).
function platformState(p) {
  if (p.state === "known") {
    return el("span", "read " + when(p.read_at) + (p.fresh ? " by the last run" : " (from an earlier run)"));
  }
  const last = when(p.read_at);
  return el("span", (p.reason || "not read whole") + "; " + (last ? "last read whole " + last : "never read whole") +
    "; no instance is judged against it", "warning");
}

// platformRead is what the platform lists and what reading it took.
function platformRead(p, known) {
  const lists = known ? "The platform lists " + p.instances + " of the broker's instances in " + p.plans + " plans. " : "";
  return lists + (p.fresh ? "This run's read: " + p.requests + " requests, " + secs(p.seconds) + "." : "");
}

// firstOf says a list holds only the first of count (by instance id).
function firstOf(listed, count) {
  return count > listed ? "The first " + listed + " of " + count + ", by instance id." : "";
}

// restorable is what a platform-only instance can be restored from,
// coloured: its deployment (the next runs adopt it), a backup (blacksmith
// restore) or nothing.
function restorable(r) {
  if (!r) return "";
  return el("span", r, "badge " + ({ deployment: "success", backup: "partial" }[r] || "failure"));
}

// retiring is an orphan deployment's retirement: its VMs stopped, and when
// its deletion is due; "" when it is not retiring.
function retiring(x) {
  const due = when(x.delete_after);
  return due ? el("span", "stopped; deleted after " + due, "badge partial") : "";
}

// remediated is one retirement step of an orphan deployment the last run
// took (or failed to): stop, start or delete.
function remediated(d) {
  const li = el("li");
  li.append(instanceLink(d.instance_id), document.createTextNode(": "), el("span", d.action + " " + d.deployment));
  const done = [d.task_id ? "task " + d.task_id : "", d.backup ? "after backup " + d.backup : ""].filter(Boolean).join(", ");
  if (done) li.append(document.createTextNode(" ("), el("span", done), document.createTextNode(")"));
  if (d.error) li.append(document.createTextNode(" "), el("span", "failed: " + d.error, "error"));
  return li;
}

// ---- bindings ----

// lostBindingsMeaning is what a lost binding is and what is to be done about
// it, on the overview and on an instance's page.
const lostBindingsMeaning = "A lost binding's credentials are gone from Vault and could not be put back from a backup or the deployed manifest. " +
  "Nothing is generated again: the app bound to it keeps what it has; unbind and bind again to give it new credentials.";

// renderBindings shows what the last complete run checked of the bindings,
// the ones it put back, and, as a warning, every binding lost so far; b
// absent: the reconciler runs without the broker, no card. Binding ids,
// reasons and instance ids are the platform's and Vault's: every value goes
// through shown (rows, el).
function renderBindings(b) {
  const card = $("bindings-card");
  card.hidden = !b;
  if (!b) return;
  const lost = b.lost || [], restored = b.restored || [], total = b.lost_total || 0;
  card.classList.toggle("warn", total > 0);
  $("bindings-checked").textContent = shown(bindingsChecked(b));
  $("bindings-lost-count").textContent = "(" + total + ")";
  const text = $("bindings-lost-text");
  text.className = total ? "warning" : "";
  text.textContent = total ? counted(total, "binding", "bindings") + " lost. " + lostBindingsMeaning
    : "Nothing lost: every binding checked so far has its credentials in Vault.";
  $("bindings-lost-more").textContent = total > lost.length ? "The first " + lost.length + " of " + total + ", by instance and binding id." : "";
  $("bindings-lost").hidden = !total;
  rows("bindings-lost", lost, (x) => [instanceLink(x.instance_id), x.binding_id, x.reason]);
  $("bindings-restored-count").textContent = "(" + restored.length + ")";
  rows("bindings-restored", restored, (x) => [instanceLink(x.instance_id), x.binding_id, x.from], "none put back by the last run");
}

// bindingsChecked is what the last complete run checked (a share of the
// fleet each run, in turn), and the unbound bindings it unlisted.
function bindingsChecked(b) {
  let s = "The last run checked " + counted(b.bindings, "binding", "bindings") + " of " + counted(b.instances, "instance", "instances") +
    " (a share of the fleet each run, in turn)";
  if (b.unlisted) s += "; " + counted(b.unlisted, "unbound binding", "unbound bindings") + " unlisted";
  return s + ".";
}

// counted is "1 binding", "3 bindings".
function counted(n, one, many) {
  n = n || 0;
  return n + " " + (n === 1 ? one : many);
}

// renderDrift names the instances whose manifest the recent runs (last,
// the last run; runs, the run log's newest) found changed behind the
// broker's back, each once (the newest finding), with what changed. Ids,
// deployments and names of what changed are a Director's: shown as text.
function renderDrift(last, runs) {
  const seen = new Set(), ids = new Set(), list = [];
  let unnamed = 0;
  for (const r of [last, ...(runs || [])]) {
    if (!r || seen.has(r.run_id)) continue;
    seen.add(r.run_id);
    const named = r.drifted || [];
    unnamed += Math.max(0, (r.drift || 0) - named.length);
    for (const d of named) {
      if (ids.has(d.instance_id)) continue;
      ids.add(d.instance_id);
      list.push(Object.assign({ found: r.started_at, dry: r.dry_run }, d));
    }
  }
  $("drift-count").textContent = "(" + list.length + ")";
  $("drift-more").textContent = unnamed ? unnamed + " more found, not named (a run names its first 100)." : "";
  rows("drift", list, (d) => [instanceLink(d.instance_id), changedText(d.changed || {}), d.deployment,
    when(d.found) + (d.dry ? " (dry run: not recorded)" : "")], "no manifest changed behind the broker's back in the recent runs");
}

function renderRuns(runs) {
  rows("runs", runs, (r) => [when(r.started_at), el("span", r.result, "badge " + r.result), secs(r.duration_seconds),
    r.writes, r.drift, r.error_count, r.feed ? r.feed.mode : ""], "no run logged yet");
}

async function runNow() {
  $("run-now").disabled = true;
  try {
    await getJSON(api("/b/reconcile"), { method: "POST" });
    showError(null);
  } catch (e) {
    showError(e.message);
  }
  refresh();
}

async function dryRun() {
  const btn = $("dry-run");
  btn.disabled = true;
  try {
    const a = await getJSON(api("/b/reconcile?dry_run=true&wait=60s"), { method: "POST" });
    renderPlan(a.summary);
    showError(null);
  } catch (e) {
    showError(e.message);
  } finally {
    btn.disabled = false;
  }
}

function renderPlan(s) {
  $("plan-card").hidden = false;
  const p = (s && s.plan) || {};
  const items = [];
  for (const it of p.creates || []) items.push(["create", it.instance_id, it.deployment, (it.records || []).join(", ") + " · " + it.strategy]);
  for (const it of p.updates || []) items.push([it.drift ? "update (drift)" : "update", it.instance_id, it.deployment, (it.records || []).join(", ")]);
  for (const o of p.orphans || []) items.push(["flag orphan", o.instance_id, o.deployment, ""]);
  for (const o of p.unorphans || []) items.push(["un-orphan", o.instance_id, o.deployment, ""]);
  for (const r of (s && s.remediated) || []) items.push(["remediate: " + r.action, r.instance_id, r.deployment, ""]);
  $("plan-summary").textContent = items.length ? items.length + " changes would be made." : "Nothing would change.";
  rows("plan", items, (x) => [x[0], instanceLink(x[1]), x[2], x[3]], "nothing would change");
}

// ---- fleet upgrades ----

// upgradePostError is why the last click of Upgrade all or Dry run was
// refused; shown until the next click.
let upgradePostError = null;

// refreshUpgrades renders GET /b/upgrades; true while a fleet upgrade runs.
async function refreshUpgrades() {
  try {
    const up = await getJSON(api("/b/upgrades"));
    renderUpgrades(up);
    return !!(up.current && up.current.running);
  } catch (e) {
    upgradeError([upgradePostError, "GET /b/upgrades: " + e.message]);
    return false;
  }
}

function upgradeError(errs) {
  const p = $("upgrade-error");
  const text = errs.filter(Boolean).join("; ");
  p.hidden = !text;
  p.textContent = shown(text);
}

// renderUpgrades shows the mode, the current or last fleet upgrade and the
// instances of it not at their plan's version, the upgrades in flight and
// the upgrade quarantine. Every value goes through shown (rows, facts, el):
// deployment names and reasons are a Director's.
function renderUpgrades(up) {
  $("upgrade-mode").textContent = shown(up.mode || "");
  upgradeError([upgradePostError, ...(up.problems || [])]);
  const c = up.current;
  const running = !!(c && c.running);
  $("upgrade-all").disabled = running;
  $("upgrade-dry-run").disabled = running;
  $("upgrade-current").hidden = !c;
  if (c) facts("upgrade-current", upgradeFacts(c)); else $("upgrade-current").replaceChildren();
  const listed = (c && c.instances) || [];
  const left = up.instances_left_off || 0;
  $("upgrade-more").textContent = left > 0 ? "From the first " + listed.length + " of " + (listed.length + left) +
    " instances; " + left + " not listed (the counts count them all)." : "";
  const behind = listed.filter((i) => !atVersion(i.state));
  const empty = !c ? "no fleet upgrade since the daemon started" : c.running ? "none yet"
    : listed.length ? "every instance in scope is at its plan's version" : "no instance in scope";
  rows("upgrade-instances", behind, (i) => [instanceLink(i.instance_id), i.deployment, i.plan_id, fromTo(i.from, i.to),
    stateBadge(i.state), i.reason, tasks(i)], empty);
  const inFlight = up.in_flight, quarantined = up.quarantined; // null: the journal was not read
  $("upgrade-in-flight-count").textContent = inFlight ? "(" + inFlight.length + ")" : "";
  rows("upgrade-in-flight", inFlight, (f) => [instanceLink(f.instance_id), f.deployment, fromTo(f.from, f.to), when(f.started_at), f.fleet],
    inFlight ? "no upgrade in flight" : "not read");
  $("upgrade-quarantine-count").textContent = quarantined ? "(" + quarantined.length + ")" : "";
  rows("upgrade-quarantine", quarantined, (q) => [instanceLink(q.instance_id), q.failures, q.version, stateBadge(q.state), q.reason,
    when(q.next_attempt)], quarantined ? "nothing quarantined" : "not read");
}

// upgradeFacts is what a fleet upgrade was asked and what it did.
function upgradeFacts(c) {
  const r = c.rules || {};
  const s = c.scope || {};
  const scope = [["service", s.service], ["plan", s.plan], ["director", s.director],
    ["instances", (s.instances || []).join(", ")]].filter(([, v]) => v).map(([k, v]) => k + " " + v).join(" · ");
  return [
    ["fleet upgrade", c.id + (c.dry_run ? " (dry run: changes nothing)" : "")],
    ["trigger", c.trigger],
    ["state", el("span", c.running ? "running" : c.dry_run ? "dry run ended" : "ended",
      "badge " + (c.running ? "running" : c.dry_run ? "partial" : c.error || c.stopped ? "partial" : "success"))],
    ["started", when(c.started_at)],
    ["ended", when(c.ended_at)],
    ["rules", "canaries " + r.canaries + " · max_in_flight " + r.max_in_flight + " · max_failures " + r.max_failures +
      " · attempt_limit " + r.attempt_limit + (r.max_instances ? " · at most " + r.max_instances + " instances" : "")],
    ["scope", scope || "every outdated instance"],
    ["instances", c.counts && Object.keys(c.counts).length ? byPlan(c.counts) : "none in scope"],
    ["resumed", c.resumed && c.resumed.length ? c.resumed.length + " upgrades cut short before, finished first" : ""],
    ["stopped", c.stopped],
    ["error", c.error],
  ];
}

// atVersion says whether an instance in state s runs its plan's version.
function atVersion(s) {
  return s === "current" || s === "upgraded" || s === "unchanged";
}

// stateBadge is a state, coloured by what it means.
function stateBadge(s) {
  const cls = { in_flight: "running", upgraded: "success", unchanged: "success", current: "success",
    failed: "failure", rolled_back: "failure", rollback_failed: "failure", errand_failed: "failure" }[s] || "partial";
  return el("span", s, "badge " + cls);
}

function fromTo(from, to) {
  return (from || "unknown") + " → " + (to || "");
}

// tasks are the Director tasks of an instance's upgrade and rollback.
function tasks(i) {
  return [i.task_id ? "task " + i.task_id : "", i.rollback_task_id ? "rollback " + i.rollback_task_id : ""].filter(Boolean).join(", ");
}

// startUpgrade posts a fleet upgrade (url: api("/b/upgrades"), with
// ?dry_run=true for a dry run) as Run now posts a run; what names the button.
async function startUpgrade(url, what) {
  $("upgrade-all").disabled = true;
  $("upgrade-dry-run").disabled = true;
  try {
    await getJSON(url, { method: "POST" });
    upgradePostError = null;
  } catch (e) {
    upgradePostError = what + ": " + e.message;
  }
  refresh();
}

// ---- instance ----

function instanceID() {
  const parts = location.pathname.split("/");
  return decodeURIComponent(parts[parts.length - 1] || "");
}

async function loadInstance() {
  const id = instanceID();
  $("instance-id").textContent = shown(id);
  try {
    const v = await getJSON(api("/b/instances/" + encodeURIComponent(id)));
    const rec = v.record || {};
    const cx = rec.context || {};
    facts("record", !v.record ? [["Vault", el("span", "no record of this instance", "muted")]] : [["deployment", v.deployment], ["service", rec.service_id], ["plan", rec.plan_id],
      ["name", cx.instance_name], ["platform", cx.platform],
      ["organization", named(cx.organization_name, rec.organization_guid || cx.organization_guid)],
      ["space", named(cx.space_name, rec.space_guid || cx.space_guid)],
      ["maintenance version", rec.maintenance_info_version],
      ["orphaned", rec.orphaned ? "yes, since " + when(rec.orphaned_at) : "no"],
      ["last operation", rec.last_operation ? rec.last_operation.type + " " + rec.last_operation.state : ""],
      ["director", rec.director],
      ["adopted", rec.adopted ? "found on a Director at " + when(rec.adopted_at) + "; awaits an operator's confirmation (the broker neither binds, updates nor deletes it until then)"
        : rec.adoption_confirmed_at ? "confirmed at " + when(rec.adoption_confirmed_at) : ""],
      ["reconciled at", when(rec.reconciled_at)]]);
    $("adopt").hidden = !rec.adopted;
    renderInstancePlatform(v.platform, !!v.record, id);
    renderLostBindings(v.lost_bindings);
    const m = v.match || {};
    facts("match", [["strategy", m.strategy], ["confidence", m.confidence], ["rule", m.rule]]);
    renderInstanceHealth(v.health || { status: "healthy" });
    renderInstanceVersion(v.version, !!v.record);
    const q = v.quarantine;
    facts("quarantine", q ? [["failures", q.failures], ["since", when(q.since)], ["next attempt", when(q.next_attempt)], ["last error", q.last_error]] : []);
    renderInstanceBindings(v.bindings, v.bindings_total);
    renderBackups(v.backups, v.backup_contents);
    rows("history", v.history, (h) => [when(h.time), h.kind, by(h), [h.message, diffNote(h)].filter(Boolean).join(" — ")]);
    showError(v.problems && v.problems.length ? v.problems.join("; ") : null);
  } catch (e) {
    showError(e.message);
  }
}

// renderInstancePlatform is the platform's record of the instance as the
// last whole read of the platform found it (p absent: no platform
// configured, no card), and, when Vault has no record of an instance the
// platform has (recorded false), the banner that the broker has lost it.
// Every value is the platform's or Vault's: shown as text.
function renderInstancePlatform(p, recorded, id) {
  const card = $("platform-card"), view = $("platform-view"), orphan = $("platform-orphan"), dl = $("platform");
  card.hidden = !p;
  orphan.hidden = true;
  orphan.replaceChildren();
  dl.hidden = true;
  dl.replaceChildren();
  view.replaceChildren();
  view.className = "";
  const lost = !!p && !recorded && !!p.record;
  $("lost").hidden = !lost;
  $("lost-text").replaceChildren(...(lost ? lostText(id) : []));
  if (!p) return;
  if (p.view !== "known") {
    view.textContent = "Not known yet: the platform has not been read whole yet (nothing is judged against it).";
    view.className = "warning";
    return;
  }
  const r = p.record;
  if (!r) {
    view.textContent = shown("The platform (as read " + when(p.read_at) + ") has no such instance.");
    if (p.absent_since) {
      orphan.textContent = shown("An orphan deployment: its deployment runs and Vault holds its records, but the platform has not had it in " +
        p.reads + (p.reads === 1 ? " read" : " reads") + " since " + since(p.absent_since) + ". The remediation " +
        "(reconciler.remediation.orphan_deployments: delete) deletes it after a backup once proven.");
      orphan.hidden = false;
    }
    return;
  }
  view.textContent = shown("As read " + when(p.read_at) + ".");
  view.className = "muted";
  facts("platform", [["name", r.name], ["organization / space", [r.organization, r.space].filter(Boolean).join(" / ")],
    ["space guid", r.space_guid], ["plan", r.plan_id],
    ["last operation", [r.last_operation, when(r.updated_at)].filter(Boolean).join(", ")]]);
  dl.hidden = false;
}

// renderLostBindings is the instance's bindings whose credentials are gone
// from Vault and could not be put back, by binding id, each with why (lost
// absent: none, no section). Ids and reasons are shown as text.
function renderLostBindings(lost) {
  const ids = Object.keys(lost || {}).sort();
  $("lost-bindings").hidden = !ids.length;
  $("lost-bindings-count").textContent = "(" + ids.length + ")";
  $("lost-bindings-text").textContent = lostBindingsMeaning;
  rows("lost-bindings-list", ids, (id) => [id, lost[id]]);
}

// lostText says what the broker lost and how the instance comes back: the
// nodes of the banner.
function lostText(id) {
  return [el("span", "The platform has this instance; Vault has no record of it, so the broker cannot bind, update or delete it. " +
    "It is restored from its deployment by the next runs if one runs, else from a backup with "),
    el("code", "blacksmith restore -c FILE " + id), el("span", ".")];
}

// renderInstanceHealth is what the Directors said of the instance's VMs.
function renderInstanceHealth(h) {
  const bad = h.status === "unhealthy";
  const status = el("span", h.status, "badge " + (bad ? "failure" : "success"));
  facts("health", bad ? [["status", status], ["since", since(h.since)], ["last asked", when(h.checked_at)], ["VMs not running", vmList(h.vms)]]
    : [["status", status], ["VMs", "every VM running when last asked, or not asked yet"]]);
}

// renderInstanceVersion is the maintenance_info version the instance was
// last deployed with against its plan's (v absent: its plan declares none,
// or the catalog has no such plan).
function renderInstanceVersion(v, recorded) {
  if (!v) {
    facts("version", recorded ? [["plan's version", el("span", "its plan declares no maintenance_info (or is not in the catalog)", "muted")]] : []);
    return;
  }
  const status = el("span", v.outdated ? "outdated" : "current", "badge " + (v.outdated ? "partial" : "success"));
  facts("version", [["status", status],
    ["runs", v.recorded || el("span", "unknown (adopted from a Director or migrated: no version recorded)", "muted")],
    ["plan's version", v.plan]]);
}

// named is "name (guid)", or whichever of the two there is.
function named(name, guid) {
  return name && guid ? name + " (" + guid + ")" : name || guid || "";
}

// diffNote is what an operation's event says of the Director's diff: how
// many changes, the groups, properties, releases and stemcells it changed,
// what was kept of what runs, what an allowance let through, the backup.
function diffNote(h) {
  const d = h.details || {};
  return d.changes === undefined && !d.diff_error ? "" : changedText(d);
}

// changedText is what a diff's summary (an event's details, a drifted
// instance's changed) names: how many changes, the instance groups,
// properties (by name), releases, stemcells and guarded changes, what was
// kept and allowed, the backup; or why the manifests could not be compared.
function changedText(d) {
  if (d.diff_error) return "could not be compared: " + d.diff_error;
  const parts = ["changes " + d.changes];
  for (const [key, label] of [["diff_groups", "groups"], ["diff_properties", "properties"], ["diff_releases", "releases"],
    ["diff_stemcells", "stemcells"], ["diff_guarded", "guarded"], ["kept", "kept"], ["allowed", "allowed"], ["backup", "backup"]]) {
    if (d[key]) parts.push(label + ": " + d[key]);
  }
  return parts.join("; ");
}

// by is who made a history event: its actor, and the platform user who asked.
function by(h) {
  const d = h.details || {};
  return d.user ? h.actor + " for " + d.platform + " user " + d.user : h.actor;
}

async function adoptOne() {
  const btn = $("adopt");
  btn.disabled = true;
  try {
    await getJSON(api("/b/instances/" + encodeURIComponent(instanceID()) + "/adopt"), { method: "POST" });
    showError(null);
  } catch (e) {
    showError(e.message);
  } finally {
    btn.disabled = false;
  }
  loadInstance();
}

async function reconcileOne() {
  const btn = $("reconcile-one");
  btn.disabled = true;
  try {
    await getJSON(api("/b/reconcile?wait=60s&instance=" + encodeURIComponent(instanceID())), { method: "POST" });
    showError(null);
  } catch (e) {
    showError(e.message);
  } finally {
    btn.disabled = false;
  }
  loadInstance();
}

// ---- instances ----

// listing is where the Instances card is: the query its form holds, the
// after of the page shown, and the afters of the pages before it (for
// Previous). Every page but the last holds listLimit instances.
const listLimit = 50;
const listing = { query: {}, after: "", before: [] };

// listStates are the badge classes of the instances' states.
const listStates = { ok: "success", orphaned: "failure", failed: "failure", in_progress: "running", adopted: "partial" };

// searchInstances reads the form and shows the first page of what it asks for.
function searchInstances(ev) {
  if (ev) ev.preventDefault();
  listing.query = { q: $("instances-q").value.trim().slice(0, 255), state: $("instances-state").value,
    plan: $("instances-plan").value, director: $("instances-director").value };
  listing.after = "";
  listing.before = [];
  loadInstances();
}

// loadInstances shows the page after listing.after, from GET /b/instances
// (the server searches, filters and pages).
async function loadInstances() {
  const params = new URLSearchParams({ limit: String(listLimit) });
  for (const [k, v] of Object.entries(listing.query)) if (v) params.set(k, v);
  if (listing.after) params.set("after", listing.after);
  const err = $("instances-error");
  try {
    const page = await getJSON(api("/b/instances?" + params.toString()));
    err.hidden = true;
    err.textContent = "";
    renderInstances(page);
  } catch (e) {
    err.hidden = false;
    err.textContent = shown(e.message);
  }
}

// renderInstances shows one page of the instance list, and the values the
// plan and Director filters take.
function renderInstances(page) {
  const list = page.instances || [];
  const from = listing.before.length * listLimit;
  $("instances-count").textContent = "(" + page.total + ")";
  $("instances-range").textContent = list.length ? (from + 1) + "–" + (from + list.length) + " of " + page.total + ", by instance id" : "";
  rows("instances", list, (x) => [instanceLink(x.instance_id), x.deployment, x.plan_id, x.director,
    el("span", x.state, "badge " + (listStates[x.state] || ""))], "no instance matches");
  listing.next = page.next || "";
  $("instances-next").disabled = !listing.next;
  $("instances-prev").disabled = listing.before.length === 0;
  options("instances-plan", "any plan", page.plans);
  options("instances-director", "any Director", page.directors);
}

// options fills the select id with "" (labelled any) and values, keeping
// what is selected.
function options(id, any, values) {
  const sel = $(id);
  const keep = sel.value;
  const list = (values || []).slice();
  if (keep && !list.includes(keep)) list.push(keep);
  const opts = [el("option", any)];
  opts[0].value = "";
  for (const v of list) {
    const o = el("option", v);
    o.value = v;
    opts.push(o);
  }
  sel.replaceChildren(...opts);
  sel.value = keep;
}

function nextInstances() {
  if (!listing.next) return;
  listing.before.push(listing.after);
  listing.after = listing.next;
  loadInstances();
}

function previousInstances() {
  if (!listing.before.length) return;
  listing.after = listing.before.pop();
  loadInstances();
}

document.addEventListener("DOMContentLoaded", () => {
  if (document.body.dataset.page === "instance") {
    $("reconcile-one").addEventListener("click", reconcileOne);
    $("adopt").addEventListener("click", adoptOne);
    $("restore-yes").addEventListener("click", restoreConfirmed);
    $("restore-no").addEventListener("click", () => askRestore(null));
    loadInstance();
    return;
  }
  $("run-now").addEventListener("click", runNow);
  $("dry-run").addEventListener("click", dryRun);
  $("upgrade-all").addEventListener("click", () => startUpgrade(api("/b/upgrades"), "Upgrade all"));
  $("upgrade-dry-run").addEventListener("click", () => startUpgrade(api("/b/upgrades?dry_run=true"), "Dry run"));
  $("instances-form").addEventListener("submit", searchInstances);
  for (const id of ["instances-state", "instances-plan", "instances-director"]) $(id).addEventListener("change", searchInstances);
  $("instances-next").addEventListener("click", nextInstances);
  $("instances-prev").addEventListener("click", previousInstances);
  refresh();
  searchInstances();
});
