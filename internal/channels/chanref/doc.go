// Package chanref is what the outside channels record on a clarification,
// in its agentx additions: the GitHub issue comment of each thread entry
// GitHub mode mirrored (agentx.github, GitHubRef), and the Slack thread
// Slack mode carries it in (agentx.slack, SlackThread, SlackPost). It reads
// and writes them (GitHubRefs, SetGitHubRefs, SlackThreadOf,
// SetSlackThread).
//
// The ledger carries this data as JSON it does not read
// (ledger.Extra.GitHub and ledger.Extra.Slack): it stays in the ledger,
// not in a channel's own state, because in remote mode the ledger is what
// hosts share, and these records are what keeps two hosts from posting
// the same comment or message twice. The enhancement proposals' mirrors
// (internal/gate/proposal) record their posts with the same types.
//
// The package imports only ledger, so that the channel packages
// (internal/channels/ghmirror, internal/channels/slackmode) and
// internal/gate/proposal, which they import, can all share it.
package chanref
