package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

var updateDocs = flag.Bool("update", false, "rewrite golden files and docs/cli")

// cliDocDir holds the CLI reference generated from the cobra commands.
const cliDocDir = "../../docs/cli"

// TestCLIReference fails when docs/cli is not what the commands generate:
// change a command, then run `go test ./internal/cli -run TestCLIReference -update`.
func TestCLIReference(t *testing.T) {
	root := newRootCmd(&App{getenv: func(string) string { return "" }})
	root.DisableAutoGenTag = true
	want := map[string][]byte{}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if !c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() && c != root {
			return nil
		}
		var b bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &b, func(name string) string { return name }); err != nil {
			return err
		}
		want[strings.ReplaceAll(c.CommandPath(), " ", "_")+".md"] = b.Bytes()
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		t.Fatal(err)
	}
	if *updateDocs {
		if err := os.RemoveAll(cliDocDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(cliDocDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range want {
			if err := os.WriteFile(filepath.Join(cliDocDir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	have, _ := filepath.Glob(filepath.Join(cliDocDir, "*.md"))
	for _, p := range have {
		if _, ok := want[filepath.Base(p)]; !ok {
			t.Errorf("%s documents a command that no longer exists; run with -update", p)
		}
	}
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join(cliDocDir, name))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("docs/cli/%s is stale; run `go test ./internal/cli -run TestCLIReference -update`", name)
		}
	}
}
