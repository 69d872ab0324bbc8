// Package simkit is what the project's two simulators (the BOSH Director's,
// bosh/sim, and the Cloud Controller's, cf/sim) share: the failures an
// operator or a spec injects into them (Failure: which requests, how many,
// what they answer; FailureSet: those in effect, picked and counted down;
// Sleep: a delay that ends with its request), the key=value syntax of their
// flags, and their JSON answers (JSON, Write: encoded as the real servers
// encode them). It imports nothing of the project.
package simkit
