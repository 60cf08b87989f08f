// Package router is the hub: it checks each question against the workflow
// rules, records it in the ledger, runs the target agent's responder
// or leaves the question for an asynchronous answer, and carries every
// clarification through its lifecycle (answer, follow-up, resolve, escalate,
// abandon), keeping agent statuses and the event log in step.
package router
