// Package setup wires a coding agent to agentx in a project: it merges
// agentx's MCP server into the client's config (.mcp.json for Claude Code,
// .codex/config.toml for Codex) and Claude Code's hooks into its settings,
// keeping everything else the files hold.
//
// The merges are pure functions of a file's bytes: MergeMCPJSON,
// MergeClaudeSettings and MergeCodexConfig. A file they cannot parse is an
// *DataError with its line and column, and nothing is written; what agentx
// wrote before (its MCP server, hooks whose command is an agentx command)
// is replaced in place, never added twice, so running a merge on its own
// result changes nothing. Plan and Apply read and write the files: every
// file is read and merged before any is written, atomically and never
// through a symbolic link.
package setup
