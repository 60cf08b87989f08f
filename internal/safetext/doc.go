// Package safetext neutralises text from outside agentx (topics, bodies,
// answers, agent names and ids read from files, responder output, events,
// error messages quoting input) before it reaches a terminal or a markdown
// document: control characters, escape sequences, bidirectional overrides,
// invisible separators and invalid UTF-8 are shown as visible escapes, and
// line breaks cannot forge a row of a table or a line of a thread.
//
// JSON output never goes through it: JSON stays exact.
package safetext
