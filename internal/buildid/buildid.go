package buildid

import (
	"runtime/debug"
	"strings"
	"sync"
)

// ID is the running build: its module version, and the commit it was built
// from when the build recorded one ("+dirty" for uncommitted changes). It
// holds no space.
var ID = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	id := bi.Main.Version
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			id += "@" + s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			id += "+dirty"
		}
	}
	if id == "" {
		id = "unknown"
	}
	return strings.Join(strings.Fields(id), "_")
})
