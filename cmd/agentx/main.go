// Command agentx lets AI coding agents ask the agents upstream of them, or a
// human, clarifying questions while they work on an issue, with every round
// recorded in a per-issue ledger under .agentx/.
//
// This binary is the lean one: the commands that need the MCP server,
// GitHub, Slack, doctor or skills run agentx-full, found beside it.
package main

import (
	"os"

	"github.com/agentx-cli/agentx/internal/cli"
)

func main() { os.Exit(cli.Main(nil)) }
