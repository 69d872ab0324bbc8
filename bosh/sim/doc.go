// Package sim is a BOSH Director simulator: it answers the Director REST API
// as described in shared/bosh-director-api.md (same JSON shapes, status codes,
// plain-text 401s, {code, description} errors, absolute 302 task redirects,
// NDJSON task output) and keeps state, so that the bosh client, the
// reconciler and their benchmarks run against something that behaves like a
// Director. It is the only stand-in for BOSH the project allows. It does not
// import the bosh client package.
//
// In-process:
//
//	d, err := sim.New(sim.Options{Auth: sim.AuthUAA, TokenTTL: 2 * time.Second, Seed: 100})
//	defer d.Close()
//	url := d.URL()
//
// The binary cmd/bosh-director-sim serves the same from the command line.
//
// State: POST /deployments creates or updates the deployment its manifest
// names through a task (queued -> processing -> done, or error); DELETE
// /deployments/:name deletes it through a task. While a task runs its
// deployment is locked (GET /locks, "locked": true in the listing). Events
// are recorded as the Director records them (GET /events: a deploy or delete
// at its start and at its end, the end naming its start in parent_id and
// carrying the error of a failure, lock acquire and release), and so are
// the changes made without a task, by AdminUser; the newest
// Options.EventsKept are kept. Manifests come back byte for byte.
// At most Options.Workers tasks run at once; the others stay queued.
//
// Knobs, as methods (safe for concurrent use) and over the admin API: latency,
// task duration, token lifetime and events kept (d.Knobs()), injected failures
// (d.Faults(): a share of requests answered 500 or another status, one
// endpoint failing, slow answers, the next N requests), and on the Director
// itself tasks made to end in error/timeout/cancelled, seeded deployments,
// deployments changed behind the broker's back, agents, counters.
//
// Structure: the Director is the simulator's face (New, URL, Close, the
// methods tests call, the routes, registered in routes.go); each resource
// is a part of its own, and every part shares one store (store.go) under one
// mutex: the gate (counting, latency, failures, authentication, UAA tokens,
// /info), deploys (deployments, manifests, listing, seeds), configBook
// (configs, the cloud config check, diffs), artifacts (releases and
// stemcells), taskBoard (creating, finding and cancelling tasks, /tasks),
// runner (workers, locks, stages, outcomes), changer (what a task changes in
// instances), vms (VMs, instances, instance states), health (agents,
// resurrection, scan and fix), blobs (logs tarballs), errands (errand jobs,
// run-errand tasks, scripted outcomes, last successful runs), recorder
// (events), meter (Stats, TaskLog) and admin (/_sim/).
//
// Errands: GET /deployments/:name/errands lists the errand instance groups
// and the jobs of Options.ErrandJobs (the simulator knows no release's
// jobs); POST /deployments/:name/errands/:errand/runs ({"keep-alive",
// "when-changed", "instances"}) runs a "run errand" task under the
// deployment's lock whose result output has a line per instance run, as
// Errand::Result#to_hash; its exit code, stdout and stderr are scripted by
// Options.Errands, -errand or PUT /_sim/errands.
//
// Admin HTTP API under /_sim/ (no authentication, no latency, not counted):
//
//	GET    /_sim/stats              Stats as JSON
//	POST   /_sim/reset              zero the counters, remove failures and pending task ends,
//	                                bring back the errand outcomes of Options.Errands
//	GET    /_sim/config             {"latency_ms","task_duration_ms","token_ttl_s","events_kept","failures"}
//	POST   /_sim/config             same body; absent fields unchanged, "failures" replaces all:
//	                                [{"endpoint":"/deployments/:name","method":"GET","rate":0.5,
//	                                  "status":500,"delay_ms":0,"count":0}]
//	POST   /_sim/seed               {"count":10000,"plans":[{"service_id","plan_id","release","version","instances"}]}
//	                                -> {"names":[...]}; count 1 to MaxSeed
//	POST   /_sim/next-task          {"deployment":"name or empty for any","state":"error|timeout|cancelled"}
//	POST   /_sim/revoke-tokens      every UAA token issued so far is refused from now on
//	PUT    /_sim/cloud-config       body: a new cloud config; older deployments become "outdated"
//	GET    /_sim/errands            {"jobs":[...],"outcomes":[{"errand","deployment","exit_code","stdout","stderr"}]}
//	PUT    /_sim/errands            same body; absent fields unchanged, a given one replaces all
//	PUT    /_sim/deployments        body: a manifest, applied at once without a task (events by AdminUser)
//	DELETE /_sim/deployments        remove every deployment at once
//	DELETE /_sim/deployments/:name  remove one deployment at once
//
// A refused admin request is answered 400 {"error": "..."} and changes nothing.
package sim
