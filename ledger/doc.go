// Package ledger owns agentx's data: the per-issue clarification ledger
// (Ledger, Clarification, ThreadEntry, Status and its transition table) in the
// AgentX file format, the agent-status file, and the local store of them
// under .agentx/state. Store.Update is the only code that writes a ledger: it
// locks, reads, mutates, validates and writes atomically (Locked.Write, the
// one write sequence), so any number of processes can share one workspace.
//
// Sharing the ledgers with other machines is not this package's: a
// Replicator (remote mode's is internal/remote's) is the small interface
// Update calls when one is set, before the lock (Prefetch) and under
// it (Apply, writing through the Locked file it is handed).
package ledger
