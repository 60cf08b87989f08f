// Package cli is the agentx command line: every command, its flags, its
// output (text and --json) and its exit codes, in the one agentx binary.
//
// Each command is a file: an options struct its flags fill and a run
// function over the session (App: the streams, the global flags, the
// output, the workspace and hub opened once). topLevel in root.go is the
// registry of commands. The work around a change (the remote and channels
// read before it; the monitor, agent-status.json, the channels' push,
// waking agents after it) is one pass that every surface runs: one-shot
// commands through the lifecycle, the MCP server after each tool call, the
// desk after each action, watch each turn. Errors are worded for a
// terminal in one table (exitcodes.go) and mapped to exit codes there.
// docs/architecture.md walks a command through the code.
package cli
