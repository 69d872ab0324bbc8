// Package platform holds the broker's instances against the platform's:
// the Cloud Controller's managed instances of the broker's plans, matched
// to Vault's records and the Directors' deployments by guid only (the OSB
// instance id is the Cloud Controller's instance guid; names are never
// compared). It reads the platform (read.go: one view, every page, or
// none), sorts each instance into one of four states (classify.go), keeps
// when each orphan deployment was first read absent and how many whole
// reads since have not found it (absent.go: the state document
// "platform", the proof a deletion waits for), and keeps the last view
// across runs for cf.check_interval and the instance view (tracker.go).
//
// It is pure but for the read: the run writes the document, tells the
// webhooks and deletes what the remediation allows. A view that is not
// whole is no view: the run's platform state is then "unknown" and nothing
// is judged from it.
package platform
