// Package todo is the queue of everything in a workspace that waits on a
// person: questions to human, escalations, escalated evaluations, pending
// enhancement proposals and answers their askers never picked up. Each
// item carries the command that settles it. `agentx todo` prints it and
// `agentx desk` serves it as a page; both act through the hub.
package todo
