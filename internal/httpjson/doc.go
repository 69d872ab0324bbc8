// Package httpjson is the one way the daemon's HTTP answers are written as
// JSON (the OSB API, the operator's endpoints): indented, with the JSON
// content type, and errors in the OSB error object's shape.
package httpjson
