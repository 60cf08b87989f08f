// Package remote shares the ledgers between machines through git refs on
// the repository's own remote: issue N's ledger is the commit chain of
// refs/agentx/clarifications/issue-N, each commit's tree holding
// issue-N.json.
//
// It owns both halves of remote mode. The transport: Git implements
// Transport with the system git (fetch, hash-object, mktree, commit-tree,
// push --force-with-lease=REF:SHA). The replication: Replicator implements
// ledger.Replicator, so that ledger.Store.Update stays the one write path
// while each change becomes an optimistic transaction on the shared ledger
// (txn: plan, queue turn, attempt, settle; retried when another host published first, BusyError after too many
// tries, SupersededError when it no longer applies), kept in the outbox
// (SyncState, remote/issue-N.json) when the remote is out of reach or
// --offline, and delivered later, replayed on the newer shared ledger
// (renumbered or superseded: Outcome). On an issue other hosts keep
// writing, a change that adds records (an ask), thread entries (an
// answer, a follow-up, a resolution) or assumptions does not race for the
// ref: it is posted as an intent on a ref of its own and merged, with
// every other intent waiting, by the oldest waiting host in one atomic
// push (Intents, intents.go), a changed record only where it is as the
// intent found it or, when one of the two changes only added assumptions,
// beside the other (rebased); its host finds a question there by what was
// asked, an answer by its thread entries, an assumption by itself (holds),
// and gives the local lock back while it waits.
// Pulled tells of the changes other
// hosts made. Refresh brings the local copies up to date at most once per
// interval and delivers the outbox; after each fetch it compares this
// host's clock with the times of the commits other hosts pushed since the
// last (checkClock, ClockFile), and Judge tells the monitor at what time
// to judge another host's question (not at all while two clocks disagree).
package remote
