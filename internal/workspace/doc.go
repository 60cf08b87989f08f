// Package workspace finds and opens an agentx workspace: the .agentx
// directory of a repository, its configuration and workflows, and its state.
package workspace
