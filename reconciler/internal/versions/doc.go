// Package versions says which instances do not run what their plan now
// deploys: the plan's maintenance_info version is the version of what it
// deploys, each instance's record the version it was last deployed with
// (none: adopted or migrated, so behind once its plan declares one). It
// lists them for a run's report and decides which a webhook hears of (an
// instance that became outdated, once per version its plan wants). It is
// pure: the run reads the index and keeps the document.
package versions
