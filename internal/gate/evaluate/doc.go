// Package evaluate is the supervisor gate's evaluator: when a worker agent
// finishes an issue (`agentx hook finish`), it runs the checks its workflow
// step declares ([[steps.evaluate]]) as real processes with timeouts,
// reads each one's verdict (PASS, FAIL or NEEDS_REVISION, from its exit
// code or a JSON verdict on stdout), records the attempt in
// .agentx/state/evaluations/issue-N.json (locked, atomic, durable), and
// decides: done, a revision request for the worker, or, past the step's
// max_revisions or on a hard FAIL, an escalation to a person through the
// hub's ordinary escalation.
package evaluate
