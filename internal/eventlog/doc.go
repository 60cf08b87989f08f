// Package eventlog is the event log beside the ledgers: events.jsonl in the
// state directory, one JSON object a line, appended by any number of
// processes at once (one O_APPEND write a line, never through a symbolic
// link) and read back in order, torn lines skipped. The hub appends an
// event for every change of a clarification or a proposal; the inbox, the
// GitHub and Slack modes and agentx events read them. Package router
// re-exports its types under their old names.
package eventlog
