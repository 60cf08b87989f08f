// Package inbox tells an agent what is new for it since it last looked:
// answers to its questions (a late one with the assumption it proceeded
// on), questions waiting for it to answer, and escalations, human decisions
// and abandonments of its questions. It reads the event log from the byte
// offset remembered per agent in state/inbox/<agent>.json, so a look costs
// only the events appended since, and marks what it delivered under that
// file's lock so that each item is delivered once.
package inbox
