package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeanDeps: the lean binary links none of what agentx-full is for
// (an HTTP and TLS stack, the MCP SDK, GitHub and Slack clients, a JSON
// Schema validator, a YAML parser), nor any crypto package (a dozen
// package initialisations at every start): one import of them into
// internal/cli would make every command start slower again.
func TestLeanDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	heavy := []string{
		"net/http", "crypto", "github.com/modelcontextprotocol/go-sdk/mcp", "github.com/google/go-github",
		"github.com/slack-go/slack", "github.com/google/jsonschema-go", "go.yaml.in/yaml",
		"github.com/agentx-cli/agentx/internal/cli/full", "github.com/agentx-cli/agentx/internal/channels/ghmirror",
		"github.com/agentx-cli/agentx/internal/channels/slackmode", "github.com/agentx-cli/agentx/internal/frontends/mcpserver",
		"github.com/agentx-cli/agentx/internal/doctor", "github.com/agentx-cli/agentx/internal/gate/skills",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, h := range heavy {
			if dep == h || strings.HasPrefix(dep, h+"/") {
				t.Errorf("cmd/agentx links %s", dep)
			}
		}
	}
}
