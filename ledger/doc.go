// Package ledger owns agentx's data: the per-issue clarification ledger
// (Ledger, Clarification, ThreadEntry, Status and its transition table) in the
// AgentX file format, the agent-status file, and the local store of them
// under .agentx/state. Store.Update is the only code that writes a ledger: it
// locks, reads, mutates, validates and writes atomically (Locked.Write, the
// one write sequence), so any number of processes can share one workspace.
// Store.Ask is Update with new questions as its change: an asker that finds
// the lock held hands its question to the holder, which makes every handed
// question in its one write (handoff.go).
//
// The ledger does not read GitHub's or Slack's data, yet carries it: in
// GitHub and Slack modes a record also says which issue comment or Slack
// message carries each of its thread entries (agentx.github, agentx.slack).
// That data is the channels' (internal/channels/chanref has its types,
// and reads and writes it); the ledger keeps it as opaque JSON
// (Extra.GitHub, Extra.Slack, see Carried) and writes it back as it was. It lives here,
// not in a channel's own state file, because in remote mode the ledger is
// what hosts share, and these records are what keeps two hosts from
// posting the same comment twice.
//
// Sharing the ledgers with other machines is not this package's: a
// Replicator (remote mode's is internal/remote's) is the small interface
// Update calls when one is set, before the lock (Prefetch) and under
// it (Apply, writing through the Locked file it is handed). What it tells
// (Pulled, Outcome) and the ids it refuses (IDChecker) are this package's
// types, so that the hub never imports the replication.
package ledger
