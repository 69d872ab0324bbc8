// Package uaa is the one UAA client-credentials token holder the Director's
// and the Cloud Controller's clients share: the token request, the answer's
// checks (it goes into a header), when to renew it, and the held token kept
// in use while a renewal fails. Each client sends the request through its
// own HTTP layer (limits, metrics, bounded answers) and maps UAA's refusals
// to its own errors. It imports nothing of the project.
//
// golang.org/x/oauth2's clientcredentials was weighed: it renews only at
// expiry less ten seconds and fails every call while UAA is down (no held
// token kept until it expires), has no way to forget one token a server
// refused, and reads answers through its own HTTP client, past the clients'
// limits and metrics.
package uaa
