// Package simkit is what the project's two simulators (the BOSH Director's,
// bosh/sim, and the Cloud Controller's, cf/sim) share: the failures an
// operator or a spec injects into them (Failure: which requests, how many,
// what they answer) and the key=value syntax of their flags. It imports
// nothing of the project.
package simkit
