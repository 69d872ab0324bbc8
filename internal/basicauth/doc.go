// Package basicauth guards HTTP handlers with one pair of basic-auth
// credentials, compared in constant time. The broker's OSB API, the
// operator's /b/ endpoints, /metrics (when it has credentials), the
// /healthz detail and the daemon's starting gate all use it; it imports
// nothing of the project, so none of them needs another for it.
package basicauth
