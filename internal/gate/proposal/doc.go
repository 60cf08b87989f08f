// Package proposal holds enhancement proposals: a new skill, a tool fix, a
// config change or a workflow improvement that agents (or the supervisor
// gate, when the same check fails on two or more issues) propose and only
// a person approves or rejects. Proposals live in
// .agentx/state/proposals.json, written under its lock, atomically and
// durably; statuses move pending → approved | rejected, approved →
// implemented. Nothing is ever approved automatically.
package proposal
