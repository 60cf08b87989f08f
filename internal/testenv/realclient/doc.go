// Package realclient runs the real agent clients, Claude Code and Codex as
// published on npm (pinned in testdata/clients/package.json), against
// scripted stand-ins of their model APIs on loopback: the Anthropic
// Messages API for Claude Code, the OpenAI Responses API for Codex. No
// model and no network are used: the stand-ins are this package's own
// code, and a test scripts every reply.
//
// .ci/run installs the clients (npm ci in testdata/clients). Where they are
// not installed the tests that need them skip, except in CI (CI=true),
// where their absence fails the test.
package realclient
