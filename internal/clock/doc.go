// Package clock gives agentx its notion of now: the real clock, or a fixed
// instant from AGENTX_NOW so scripts and tests can move time.
package clock
