package workflow

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the .golden files under testdata/bad")

// TestBadFilesGolden loads every testdata/bad/*.toml (config-*.toml as config.toml,
// the rest as workflows) and compares the full error text with its .golden file.
func TestBadFilesGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.toml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			var err error
			if strings.HasPrefix(name, "config-") {
				_, err = LoadConfigFile(file)
			} else {
				_, err = LoadWorkflowFile(file)
			}
			require.Error(t, err, "a bad file must not load")

			var es Errors
			require.True(t, errors.As(err, &es), "want workflow.Errors, got %T: %v", err, err)
			for _, e := range es {
				require.Equal(t, file, e.File, "errors name the file as given")
				require.NotEmpty(t, e.Msg)
			}

			got := err.Error() + "\n"
			golden := strings.TrimSuffix(file, ".toml") + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./workflow -run TestBadFilesGolden -update")
			require.Equal(t, string(want), got)
			require.NotContains(t, got, string(filepath.Separator)+"work", "golden paths stay relative")
		})
	}
}
