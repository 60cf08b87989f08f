// Package archdoc keeps docs/architecture.md true. Its test compares the
// document's package table (every package of the module, what it owns, the
// agentx packages it imports) with what `go list` reports, and enforces the
// design's import rules: the core (router, monitor, ledger, lock, workflow)
// imports only what the design allows it and the plumbing; nothing but
// cmd/agentx imports internal/cli. `go test ./internal/archdoc -update`
// rewrites the table's import column (and adds a row for a new package) from
// the code; what a package owns stays the author's words.
package archdoc
