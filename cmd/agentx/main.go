// Command agentx lets AI coding agents ask the agents upstream of them, or a
// human, clarifying questions while they work on an issue, with every round
// recorded in a per-issue ledger under .agentx/.
//
// One binary holds every command; the code is in internal/cli and below
// (docs/architecture.md).
package main

import (
	"os"

	"github.com/agentx-cli/agentx/internal/cli"
)

func main() { os.Exit(cli.Main()) }
