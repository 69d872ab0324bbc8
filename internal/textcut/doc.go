// Package textcut cuts a text to a bound in bytes without cutting a
// character in two: what the project keeps or shows of a text it does not
// control (an error, a Director's task result, a reason, a name) is bounded,
// and a text that was valid UTF-8 stays so, to read back the same from JSON
// and to show as it was written.
//
// Prefix is the start of a text within the bound; Marked is the same with a
// marker ("..." or "…") saying that it was cut, the marker counted within the
// bound. A caller that must accept invalid UTF-8 makes it valid first
// (strings.ToValidUTF8): a cut does not repair what it was given. It imports
// nothing of the project.
package textcut
