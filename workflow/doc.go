// Package workflow owns the clarification rules of an agentx workspace: it loads
// .agentx/config.toml and .agentx/workflows/*.toml (the AgentX workflow format) with a
// strict decoder, fills in defaults and validates them, reporting every problem as an
// *Error naming file, line and key. Callers turn a workflow into a Rule with
// Workflow.Rule to learn whom an agent may ask, how many rounds it gets and whether it
// may block.
package workflow
