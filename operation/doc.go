// Package operation holds the steps that every change of what runs takes,
// written once, below the broker and the reconciler: the change guard that
// reads the Director's own diff of a deploy (Classify, Guard), the
// configuration-server variables that a rendering must not replace
// (KeepVariables), and the start of a Director task under a context id
// that finds a lost answer again instead of starting a second task (Start).
//
// What a caller does with them, in order: hold the instance, back up what
// runs (the manifest the Director serves), render, KeepVariables against
// the running manifest, preview (bosh.Client.Diff), Guard, Start the deploy
// with the diff's context (bosh.WithDiffContext), record the outcome once
// the task succeeded, settle. docs/operations.md explains the guard to an
// operator.
package operation
