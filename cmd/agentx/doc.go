// Command agentx lets AI coding agents ask the agents upstream of them, or a
// human, clarifying questions while they work on an issue, with every round
// recorded in a per-issue ledger under .agentx/.
//
// This package is thin: it parses flags, calls the packages that do the
// work, prints the result and maps errors to exit codes.
package main
