// Package httpkit is the HTTP layer the Director's and the Cloud
// Controller's clients (bosh, cf) share, written once below them: the
// *http.Client (TLS 1.2 or later verified against a configured CA or the
// system's roots, redirects not followed, a timeout per request), a bound on
// the requests in flight that a caller waits for no longer than its context,
// answers read whole into memory up to a bound (a longer one is a
// *TooLargeError, never cut short), every request counted, and JSON decoded
// with an error whose text is bounded.
//
// What each API does differently stays in its client: the routes and their
// bounds, the credentials and their renewal, the redirects a Director's task
// answers with, and the errors: each client turns ErrNoSlot, a
// *TooLargeError and a request that got no answer into its own (matching
// its own sentinels with errors.Is) and parses its API's error answers. It
// imports nothing of the project but textcut.
package httpkit
