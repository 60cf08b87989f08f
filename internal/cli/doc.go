// Package cli is the agentx command line: every command, its flags, its
// output (text and --json) and its exit codes, in the one agentx binary.
//
// This package is thin: it parses flags, calls the packages that do the
// work, prints the result and maps errors to exit codes.
package cli
