package main

import (
	"fmt"
	"os"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/utczone"
)

func main() {
	utczone.Restore() // as agentx: no time zone read while packages initialise
	var settings struct{ Name string }
	root := &cobra.Command{Use: "floor", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(&cobra.Command{
		Use:  "version",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if v := os.Getenv("FLOOR_TOML"); v != "" { // never set by the benchmark: toml is linked, not run
				if _, err := toml.Decode(v, &settings); err != nil {
					return err
				}
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "floor dev", settings.Name)
			return err
		},
	})
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
