// Package cf is blacksmith's client for the Cloud Controller's v3 API, as
// far as the reconciler reads it: a broker, its plans, the managed service
// instances of those plans (all pages) and one instance. Admin holds the
// few writes an operator's errand makes with a client of its own: a
// broker's create, update and delete, a plan's visibility, an instance's
// delete; each answered with a job (a 202's Location, on the API only) is
// polled every Options.JobPoll until it is COMPLETE or FAILED (a *JobError
// matching ErrJobFailed, with the job's errors).
//
// # Why its own HTTP, not go-cfclient
//
// github.com/cloudfoundry/go-cfclient/v3 (e.g. v3.0.0-alpha.16) is the
// ecosystem's client, and it does take contexts and TLS settings. It was not
// added: the reconciler needs guarantees that would have to be wrapped
// around it anyway, and that the bosh package gives with a few hundred lines
// of net/http, the layer both share (internal/httpkit) included: every answer read into memory up to a
// bound (a longer one is an error, never a truncated list); a next link
// followed only toward the configured API's scheme and host, and a bounded
// number of pages; the CF error object decoded into an *APIError matching
// this package's sentinels (ErrNotFound, ErrUnavailable, ErrRateLimited,
// ErrUnauthorized) with errors.Is, so that the reconciler can tell "the
// platform says no" from "the platform's view is unknown"; and metrics on a
// registry passed in. Its own HTTP also keeps the module free of
// go-cfclient's dependency tree (oauth2, its own retry and paging code) and
// of an alpha API that may still break.
//
// # Behaviour
//
// New does no I/O. On first use the client reads GET / (without
// credentials) and keeps the UAA URL it names (links.uaa, else links.login).
// The client secret is sent only to an https UAA, or, for tests, to a
// plain-http UAA on the API's own host and port when the API itself is plain
// http. Tokens (client_credentials, HTTP basic auth) are cached until a
// fifth of their life (at most 30s) is left; a 401 CF-InvalidAuthToken drops
// the token, fetches another and sends the request once more.
//
// Requests go straight to the API and UAA (no proxy from the environment),
// at most MaxInFlight at a time, each bounded by Timeout and the caller's
// context; a call the caller cancels returns the context's error, not
// ErrUnavailable. Redirects are not followed.
//
// Lists are read with per_page = Options.PerPage, following the absolute
// pagination.next.href until it is null: a next link toward another scheme
// or host than the API's is refused (ErrUnsafeLink), as is a link seen
// before or more than MaxPages pages. An answer is read up to MaxPageBytes
// (GET / and the token up to 1 MiB); a longer one matches ErrAnswerTooLarge.
// A page cut short, undecodable or without its pagination object, a 5xx or
// no answer at all match ErrUnavailable: the platform's view is unknown and
// the caller must not act on a partial list. A 429 matches ErrRateLimited and
// its *APIError carries the reset time. Texts quoted from answers are cut to
// 512 bytes.
package cf
