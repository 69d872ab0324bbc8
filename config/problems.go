package config

import (
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/internal/problems"
)

// Problem is one thing wrong with the configuration.
type Problem struct {
	// Key names where the problem is: a dotted file key (reconciler.interval),
	// an environment variable (BLACKSMITH_RECONCILER_INTERVAL) or the file's path.
	Key string
	// Message says what is wrong, e.g. `invalid duration "abc"`.
	Message string
	// Line is the line in the file, or 0 when the problem is not tied to one.
	Line int
	// Err is the underlying error, if any (for errors.Is, e.g. fs.ErrNotExist).
	Err error
}

// String renders the problem as "key: message".
func (p Problem) String() string { return p.Key + ": " + p.Message }

// Unwrap returns the underlying error, or nil.
func (p Problem) Unwrap() error { return p.Err }

// Problems is the error Load returns: every problem found, in the order found.
// Its List field holds the problems; never empty in an error returned by Load.
type Problems problems.List[Problem]

// Error lists every problem, one per line.
func (p *Problems) Error() string { return (*problems.List[Problem])(p).Error() }

// Unwrap returns the underlying errors, so errors.Is(err, fs.ErrNotExist) works.
func (p *Problems) Unwrap() []error { return (*problems.List[Problem])(p).Unwrap() }

func (p *Problems) add(key string, line int, format string, args ...any) {
	p.List = append(p.List, Problem{Key: key, Line: line, Message: fmt.Sprintf(format, args...)})
}

// err returns p as an error, or nil when there is no problem.
func (p *Problems) err() error {
	if len(p.List) == 0 {
		return nil
	}
	return p
}
