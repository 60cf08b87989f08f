// Package inbox tells an agent what is new for it since it last looked:
// answers to its questions (every reply of the round it has not seen, in
// order; a late one with the assumption it proceeded on), questions
// waiting for it to answer, and escalations, human decisions and
// abandonments of its questions, most important first and within a size
// limit. It reads the event log from the byte offset remembered per agent
// in state/inbox/<agent>.json, so a look costs only the events appended
// since, and keeps there what the agent has seen of each clarification
// however it read it (MarkSeen), under that file's lock, so that each item
// is delivered once. A first look delivers what concerns the agent now,
// and counts the history.
package inbox
