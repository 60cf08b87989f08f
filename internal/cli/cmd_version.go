package cli

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/spf13/cobra"
)

// buildVersion is set at link time:
//
//	go build -ldflags "-X github.com/agentx-cli/agentx/internal/cli.buildVersion=v1.2.3" ./cmd/agentx
var buildVersion = ""

// version is the version agentx reports: buildVersion, else the module's
// version when installed with go install ...@version, else "dev". Worked
// out once: reading the build information parses the whole of it.
var version = sync.OnceValue(func() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
})

// versionOptions are `agentx version`'s (it has no flags).
type versionOptions struct{}

func newVersionCmd(a *App) *cobra.Command {
	o := &versionOptions{}
	return &cobra.Command{
		Use:         "version",
		Short:       "Print the agentx version",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{inertKey: "true"},
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *versionOptions) run(a *App) error {
	v := map[string]string{"version": version(), "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH}
	return a.emit(v, func() {
		a.printf("agentx %s (%s, %s/%s)\n", v["version"], v["go"], v["os"], v["arch"])
	})
}
