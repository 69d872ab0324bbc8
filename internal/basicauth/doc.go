// Package basicauth guards HTTP handlers with basic-auth credentials,
// compared in constant time: one pair (Require: the broker's OSB API,
// /metrics when it has credentials) or users with roles (RequireRole: the
// operator's /b/ endpoints and the dashboard, where a Viewer only reads).
// The /healthz detail and the daemon's starting gate use it too; it imports
// nothing of the project, so none of them needs another for it.
package basicauth
