// Package problems holds the error type that config and catalog return when
// they reject their input: every problem found, one per line, so an operator
// fixes them all in one go rather than one per run.
package problems
