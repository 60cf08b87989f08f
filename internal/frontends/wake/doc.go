// Package wake brings an answer back to an agent whose turn has ended: it
// remembers where each agent can be reached (the session its client's hook
// reported), which turns a hook is holding, and starts an agent's
// [agents.NAME] resume command, once per delivery, with what came back to
// its questions on stdin. Any agentx process that finds something to
// deliver does it; a wake whose process was killed before it finished is
// finished by the next one.
package wake
