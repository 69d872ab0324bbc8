// Package catalog reads the services and plans the broker offers from
// forge-style directories:
//
//	<dir>/<service>/service.yml         id, name, description, bindable, tags, limit
//	<dir>/<service>/<plan>/plan.yml     id, name, description, limit, max_bindings, updatable, ...
//	<dir>/<service>/<plan>/manifest.yml the plan's BOSH manifest template (kept as text)
//	<dir>/<service>/<plan>/credentials.yml  optional binding credentials template (kept as text)
//
// Loading is strict: unknown fields, missing required fields, wrong types,
// templates that do not parse, and service or plan ids used twice are all
// reported at once in a *Problems, each naming the file and the field.
// Templates are Go text/template text; the broker renders them (see
// manifests/catalog/README.md for the data they are given).
package catalog
