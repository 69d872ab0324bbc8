package config

import (
	"errors"
	"fmt"
	"io"
)

// CheckConfig is `blacksmith check-config -c FILE`: it loads the file at path
// with the environment env reports and, when the configuration is valid,
// prints it as YAML with secrets redacted to stdout and returns 0. Otherwise
// it prints every problem to stderr, one per line (with the file line where
// known), and returns 1.
func CheckConfig(path string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	c, err := Load(path, env)
	if err != nil {
		printProblems(path, err, stderr)
		return 1
	}
	out, err := c.Redacted().YAML()
	if err != nil {
		fmt.Fprintf(stderr, "check-config: %v\n", err)
		return 1
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "check-config: writing configuration: %v\n", err)
		return 1
	}
	return 0
}

func printProblems(path string, err error, w io.Writer) {
	var problems *Problems
	if !errors.As(err, &problems) {
		fmt.Fprintf(w, "check-config: %v\n", err)
		return
	}
	fmt.Fprintf(w, "check-config: %d problem(s) in the configuration:\n", len(problems.List))
	for _, p := range problems.List {
		if p.Line > 0 && p.Key != path {
			fmt.Fprintf(w, "  %s (%s line %d)\n", p, path, p.Line)
			continue
		}
		fmt.Fprintf(w, "  %s\n", p)
	}
}
