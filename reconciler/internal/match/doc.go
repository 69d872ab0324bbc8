// Package match ties BOSH deployments to service instances, as pure code:
// the four strategies in order (a name {planID}-{instanceID}, the manifest's
// properties.blacksmith, a release mapped to a service, a configured name
// rule), each with its confidence; what the reconciler reads of a manifest
// (properties.blacksmith, stemcells); and the claims, which give each
// instance to one deployment of a run whatever order the fetches finish in.
//
// It owns the matching rules and nothing else: it does no I/O, keeps no
// state across runs and must not import the reconciler's other packages but
// report (whose Match and Strategy it fills in).
package match
