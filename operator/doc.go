// Package operator serves the operator's HTTP endpoints, apart from the
// Open Service Broker API that package broker serves to the platform:
//
//	/b/reconcile  forcing and watching reconciler runs (ReconcileHandler)
//	/b/upgrades   starting and watching fleet upgrades (UpgradesHandler)
//	/metrics      the Prometheus exposition of the daemon's registry (MetricsHandler)
//	/healthz      whether Vault and the Director answer (HealthHandler)
//
// It declares what it needs of the reconciler (Reconciler) and imports
// nothing of broker. The daemon mounts /b/reconcile and /b/upgrades behind
// the broker's credentials and its cross-origin protection, and counts them
// in the broker's request metrics, next to the OSB API; /metrics and
// /healthz are mounted on their own.
package operator
