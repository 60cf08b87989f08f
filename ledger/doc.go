// Package ledger owns agentx's data: the per-issue clarification ledger
// (Ledger, Clarification, ThreadEntry, Status and its transition table) in the
// AgentX file format, and the agent-status file. Store.Update is the only code
// that writes a ledger: it locks, reads, mutates, validates and writes
// atomically, so any number of processes can share one workspace.
package ledger
