package catalog

import (
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/internal/problems"
)

// Problem is one thing wrong with a catalog directory.
type Problem struct {
	// File is the file (or directory) the problem is in.
	File string
	// Field is the field in File, or "" when the problem is the file itself.
	Field string
	// Message says what is wrong.
	Message string
	// Err is the underlying error, if any (for errors.Is, e.g. fs.ErrNotExist).
	Err error
}

// String renders the problem as "file: field: message" ("file: message"
// without a field).
func (p Problem) String() string {
	if p.Field == "" {
		return p.File + ": " + p.Message
	}
	return p.File + ": " + p.Field + ": " + p.Message
}

// Unwrap returns the underlying error, or nil.
func (p Problem) Unwrap() error { return p.Err }

// Problems is the error Load returns: every problem found. Its List field
// holds the problems; never empty in an error returned by Load.
type Problems problems.List[Problem]

// Error lists every problem, one per line.
func (p *Problems) Error() string { return (*problems.List[Problem])(p).Error() }

// Unwrap returns the underlying errors.
func (p *Problems) Unwrap() []error { return (*problems.List[Problem])(p).Unwrap() }

func (p *Problems) add(file, field, format string, args ...any) {
	p.List = append(p.List, Problem{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}
