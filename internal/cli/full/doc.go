// Package full is what the agentx-full binary adds to the command line
// (ext.Extra): the MCP server (mcp), GitHub and Slack modes (github, slack,
// and the reading and mirroring around the commands that run the monitor),
// doctor and skills. They are kept out of the lean agentx binary because
// the packages they need (an HTTP and TLS stack, the MCP SDK, a JSON Schema
// validator, a YAML parser) would cost every command their start-up.
package full
