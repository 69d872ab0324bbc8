// Package versions says which instances do not run what they should: the
// plan's maintenance_info version is the version of what it deploys, each
// instance's record the version it was last deployed with (none: adopted
// or migrated, so behind once its plan declares one). It lists them for a
// run's report and decides which a webhook hears of (an instance that
// became outdated, once per version its plan wants).
//
// It also says which instances are behind the Director: their manifest asks
// for the latest of a release or stemcell, and the Director has a newer
// version uploaded than their deployment runs (Lags), ordering versions as
// the Director does (Compare). It is pure: the run reads the index, the
// Directors and the manifests, and keeps the document.
package versions
