// Package healthloop asks the Directors how the instances' VMs are, on a
// loop of its own beside the reconciler's runs, within a budget that keeps
// the daemon's footprint on a shared Director small.
//
// A Director's vm-state task (GET /deployments/:name/vms?format=full) is a
// task on its urgent queue that takes one of its workers (three by
// default, none dedicated to such tasks) for as long as the agents take to
// answer: about 15 s when one does not (5 s, tried three times). A sweep
// of every deployment inside the run made the run as long as the sweep's
// share and the Director's queue as long as the run's concurrency. The
// loop instead, for each Director on its own:
//
//   - starts at most TasksAtOnce vm-state tasks at once (default 1);
//   - starts none while the Director has a task of one of the broker's
//     deployments queued (the broker's deploys come first), nor on a
//     deployment a task holds;
//   - asks first what a run named (instance, VM and alert events), then
//     what is pending (a check that failed, a deployment that was busy),
//     then the unhealthy instances again (to see them recover), and paces
//     the sweep: the deployments of the current slot (health.Sweep) spread
//     evenly over the slot, so that every deployment is asked about once a
//     health_sweep and one at a time.
//
// What it learns is folded into the health document (health.Apply) and
// written, and only then told (the webhooks, the log); a document that did
// not change is not written. It works from the newest handover a run made
// (health.Handover) and only while its daemon leads; the run never waits
// for it.
package healthloop
