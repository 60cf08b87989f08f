// Package slackmode is Slack mode: each question to a person and each
// escalation is posted to a channel, one thread per clarification, with
// what follows (follow-ups, answers given elsewhere, the resolution, the
// asker's assumption) in the thread; the first reply in the thread by an
// allowed person answers, later replies are further answers, a reply naming
// an option by number or label answers with that option, and a reply to an
// escalation settles it, through the hub, as the person Slack says wrote
// it. It is polled from the commands that run the monitor (relay), or fed
// by the optional Socket Mode listener; no Slack failure fails a local
// command. Enhancement proposals are posted too, each a message with its
// evidence and decisions in its thread, which nothing reads: people decide
// them from a shell. A clarification's thread and the message of each
// entry in it are recorded in the ledger (agentx.slack, read and written
// through internal/channels/chanref), so that no two processes or hosts
// post one twice.
package slackmode
