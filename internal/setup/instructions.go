package setup

// Instructions is the block to give an agent in CLAUDE.md, AGENTS.md or
// its system prompt: when to ask and how. docs/agents.md (section 3) shows
// the same text; a test keeps the two equal.
const Instructions = `## Clarifying questions (agentx)
- Ask only when a wrong guess would be costly to undo; otherwise proceed and record
  your assumption with clarify_assume.
- Ask with clarify_ask (an upstream agent) or ask_human (a person, optionally with
  options). Asking returns at once: do not poll. End your turn, or go on with work that
  does not depend on the answer; the answer arrives in a later turn, or through clarify_wait.
- If clarify_wait times out: proceed on your best judgment and record your assumption
  with clarify_assume.
- A LATE answer comes with the assumption you made: check whether your work still holds,
  redo what depended on it, then clarify_resolve.
- Answer questions addressed to you with clarify_answer. Close your own question with
  clarify_resolve once it is settled, or ask a follow-up with clarify_followup.
`
