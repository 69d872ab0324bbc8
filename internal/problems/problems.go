package problems

import "strings"

// Problem is one thing wrong with the input.
type Problem interface {
	// String renders the problem on one line.
	String() string
	// Unwrap returns the underlying error, or nil.
	Unwrap() error
}

// List is every problem found, in the order found. A package keeps its own
// exported name for it (`type Problems problems.List[Problem]`) and forwards
// Error and Unwrap, so that errors.As(err, &p) with *config.Problems or
// *catalog.Problems keeps working.
type List[P Problem] struct {
	// List holds the problems; never empty in an error a Load returns.
	List []P
}

// Error lists every problem, one per line.
func (l *List[P]) Error() string {
	lines := make([]string, len(l.List))
	for i, p := range l.List {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems' underlying errors, so errors.Is(err,
// fs.ErrNotExist) works.
func (l *List[P]) Unwrap() []error {
	var errs []error
	for _, p := range l.List {
		if err := p.Unwrap(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
