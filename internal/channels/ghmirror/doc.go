// Package ghmirror is GitHub mode: it mirrors each issue's clarifications
// as comments on the GitHub issue of the same number (one comment per
// thread entry, with hidden metadata, labels by status, @mentions on
// escalation) and takes people's answers and decisions from comments there
// (/answer, /resolve), through the hub, as the person GitHub says wrote
// them. It is polled from the commands that run the monitor, never a
// daemon; what GitHub does not take is queued in a small outbox and
// retried, and no GitHub failure fails a local command. The comment of
// each entry is recorded in the ledger (agentx.github, read and written
// through internal/channels/chanref), so that no two processes or hosts
// post it twice.
package ghmirror
