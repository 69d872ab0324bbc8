package sim

import "github.com/blacksmith-reconciler/blacksmith/internal/simkit"

// Faults are the failures injected into the Director's answers
// (Director.Faults). Its methods are safe for concurrent use.
type Faults struct {
	set simkit.FailureSet
}

// Inject adds a failure; the first added failure that picks a request
// decides what happens to it. A failure with a rate outside 0..1, a status
// outside 200..599 (0 = 500), or a negative delay or count is refused with
// an error matching ErrBadOptions.
func (fs *Faults) Inject(f Failure) error {
	if err := checkFailure(&f); err != nil {
		return err
	}
	fs.set.Add(f)
	return nil
}

// Clear removes every injected failure.
func (fs *Faults) Clear() { fs.set.Set(nil) }

// List returns the failures in effect (with what is left of their Count).
func (fs *Faults) List() []Failure { return fs.set.List() }
