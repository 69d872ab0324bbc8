// Package bosh is blacksmith's client for the BOSH Director REST API.
//
// It reuses gogobosh's types where they fit but does its own HTTP (over
// internal/httpkit, the layer it shares with the cf client), so that the
// daemon does not inherit gogobosh's faults: TLS is verified against a
// configurable CA, basic and UAA client-credential authentication are
// detected lazily from GET /info (a Director that is down at start-up is an
// error the caller retries, not a crash), UAA tokens are refreshed before
// they expire and once on a 401 from many goroutines at a time (a token
// that has not expired is kept while UAA cannot renew it), a retried
// request resends its body, every call honours its context, and the
// Director's {code, description} error is surfaced as an *APIError that
// matches the sentinel errors with errors.Is.
//
// Calls toward one Director are bounded by a client-side rate limit and a
// limit on concurrent requests, and are counted in Prometheus metrics
// labelled with the client's name, so that several Directors can be used
// side by side.
//
// VMs lists a deployment's VMs from the Director's database (no task);
// only VMStates asks for ?format=full, a Director task that contacts every
// agent, which the reconciler's health loop paces and bounds per Director.
//
// RunErrand runs an errand as the bosh CLI's run-errand does (a task;
// keep-alive, when-changed, an instance filter) and ErrandResults reads its
// runs back from the task's result output, one per instance, the exit code,
// stdout and stderr of each (the task ends done whatever the exit codes).
//
// The Director's event log (GET /events) is read a page of at most
// EventsPage events at a time, newest first, paging back with
// EventQuery.BeforeID. A page is checked before it is returned: ids are
// decimal strings (compared with IDBefore, never as text), newest first,
// older than BeforeID, so that paging back always ends.
//
// GET /info is read without credentials, so the UAA it names is not trusted
// blindly: the client secret is sent only to a token URL over https, or, for
// tests, to the Director's own address when that is plain http on a
// loopback host; any other URL is refused (ErrUntrustedUAA) before anything
// is sent to it. Every answer is read into memory up to a bound that depends
// on the request (1 MiB for /info, a token or a task, 8 MiB for a page of
// GET /events, 16 MiB for a manifest, 32 MiB for a listing or a task's
// event log); a longer one is an error
// matching ErrAnswerTooLarge, and the texts of an answer that an error quotes
// are cut to 512 bytes.
package bosh
