// Package cli is the agentx command line: every command, its flags, its
// output (text and --json) and its exit codes. Two binaries are built from
// it: agentx, which agents run many times a second and which links only what
// the everyday commands need, and agentx-full, which also holds the MCP
// server, GitHub and Slack modes, doctor and skills (see Extra).
//
// This package is thin: it parses flags, calls the packages that do the
// work, prints the result and maps errors to exit codes.
package cli
