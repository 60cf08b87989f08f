package workflow

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed defaults
var defaultsFS embed.FS

// DefaultFiles returns the files `agentx init` writes into .agentx/, keyed by
// slash-separated path relative to it ("config.toml", "workflows/feature.toml", ...).
// Each call returns fresh copies.
func DefaultFiles() map[string][]byte {
	files := map[string][]byte{}
	err := fs.WalkDir(defaultsFS, "defaults", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := defaultsFS.ReadFile(p)
		if err != nil {
			return err
		}
		files[strings.TrimPrefix(p, "defaults/")] = data
		return nil
	})
	if err != nil { // the embedded tree is fixed at build time
		panic("workflow: reading embedded defaults: " + err.Error())
	}
	return files
}
