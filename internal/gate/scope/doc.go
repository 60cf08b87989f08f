// Package scope is the supervisor gate's write scope: the paths a workflow
// step's agent may write (`scope = [...]` on the step; reads are never
// restricted). It matches repository-relative paths against the step's
// patterns ("**" for any depth), resolves the paths a tool would write
// ("..", symbolic links) against the repository root, and reads the Claude
// Code PreToolUse hook payload that `agentx scope check` judges.
package scope
