// Package health keeps what the Directors say of each instance's VMs, the
// reconciler's "a container is unhealthy": an instance is unhealthy when a
// VM of it that should run does not (a process failing or stopped, its
// agent not answering), healthy again when every one runs. It holds what
// a run hands the health loop (Handover), which deployments a slot of the
// sweep holds (Sweep), and what changed since the last answers: the
// transitions the webhooks hear of. It is pure: the health loop
// (healthloop) asks the Directors and keeps the document.
package health
