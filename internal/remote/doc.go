// Package remote shares the ledgers between machines through git refs on
// the repository's own remote: issue N's ledger is the commit chain of
// refs/agentx/clarifications/issue-N, each commit's tree holding
// issue-N.json. Git implements ledger.Remote with the system git (fetch,
// hash-object, mktree, commit-tree, push --force-with-lease=REF:SHA), so
// ledger.Store.Update stays the one write path; Refresh brings the local
// copies up to date at most once per interval and delivers the outbox.
package remote
