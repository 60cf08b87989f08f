package cli

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/workflow"
)

// initOptions are `agentx init`'s flags.
type initOptions struct {
	force bool
}

func newInitCmd(a *App) *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create .agentx/ with a config and the feature, story and bug workflows",
		Long: `Create .agentx/ in the current directory (or --root): config.toml, the
workflows feature.toml, story.toml and bug.toml, and state/ with a .gitignore
that keeps lock files out of version control. It refuses to overwrite existing
files unless --force is given; state/ is never touched.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite existing config and workflow files")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *initOptions) run(a *App) error {
	root, err := a.startDir()
	if err != nil {
		return err
	}
	written, err := workspace.Init(root, workflow.DefaultFiles(), o.force)
	if err != nil {
		return err
	}
	rel := make([]string, len(written))
	for i, p := range written {
		rel[i], _ = filepath.Rel(root, p)
	}
	return a.emit(map[string]any{"root": root, "files": rel}, func() {
		a.printf("Initialised agentx in %s\n", filepath.Join(root, workspace.Dir))
		for _, p := range rel {
			a.printf("  %s\n", p)
		}
		a.printf("Next: agentx workflow show feature\n")
	})
}
