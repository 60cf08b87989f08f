// Package internal holds everything of agentx that is not its public core
// (router, monitor, ledger, lock, workflow), grouped by role: the commands
// (cli), the agent-facing front ends (frontends/: the MCP server, the inbox,
// the desk, the todo queue, waking agents), the channels (channels/: GitHub,
// Slack and what they share), replication over git (remote), the supervisor
// gate (gate/: evaluate, scope, proposals, skills), what a question carries
// (brief), the trust set, doctor, setup, the workspace, and plumbing (atomic
// files, safe text, the clock, ...). docs/architecture.md has a row for each
// package; a test keeps it true (internal/archdoc).
package internal
