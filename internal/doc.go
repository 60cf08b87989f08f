// Package internal holds agentx's plumbing: atomic file writes, the clock,
// terminal detection. Nothing in it knows about clarifications.
package internal
