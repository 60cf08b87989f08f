// Package doctor checks an agentx workspace's state and repairs what can be
// repaired safely: every ledger must parse, pass agentx's validation and the
// AgentX ledger schema (agentx's own "agentx" key aside); stale lock files
// and temp files left by killed processes are found (and removed); the
// index of open clarifications is verified against the ledgers (and
// rebuilt). It never rewrites a ledger.
package doctor
