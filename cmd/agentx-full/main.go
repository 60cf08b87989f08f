// Command agentx-full is agentx with every command: besides the everyday
// ones, the MCP server (agentx mcp), GitHub and Slack modes, doctor and
// skills. The lean agentx binary runs it for those commands, and for the
// commands that reach GitHub or Slack in a workspace that configures them;
// install the two side by side (go install github.com/agentx-cli/agentx/cmd/...).
package main

import (
	"os"

	"github.com/agentx-cli/agentx/internal/cli"
	"github.com/agentx-cli/agentx/internal/cli/full"
)

func main() { os.Exit(cli.Main(full.Extra)) }
