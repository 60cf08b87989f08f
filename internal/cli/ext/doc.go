// Package ext is the contract between the agentx command line
// (internal/cli) and what the full binary adds to it (internal/cli/full):
// the App a command is built from, the extension a run gets, and the exit
// codes and failures commands return. Neither side imports the other
// through it, so the CLI's tests can run the full binary's commands.
package ext
