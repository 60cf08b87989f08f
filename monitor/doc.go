// Package monitor finds clarifications that need the hub to step in —
// stale (unanswered past their SLA), stuck (the same question asked again,
// or bounced back), deadlocked (agents waiting on each other in a cycle) and
// abandoned (the asker finished its issue) — with pure functions over the open
// clarifications (ledger.IndexEntry) and a clock, and acts on what it finds
// through the router, re-checking each decision under the ledger's lock so
// that monitors running at once never act twice. It runs as a side effect of
// hooks, `agentx ready` and every `agentx clarify` command; no daemon.
package monitor
