package trust

import (
	"errors"
	"path/filepath"
	"runtime"
)

// userConfigDir is os.UserConfigDir with the environment read through
// getenv, so that a command run in-process with an environment of its own
// finds the same directory a process would.
func userConfigDir(getenv func(string) string) (string, error) {
	switch runtime.GOOS {
	case "windows":
		if d := getenv("AppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%AppData% is not set")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Application Support"), nil
		}
		return "", errors.New("$HOME is not set")
	case "plan9":
		if h := getenv("home"); h != "" {
			return filepath.Join(h, "lib"), nil
		}
		return "", errors.New("$home is not set")
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		if !filepath.IsAbs(d) {
			return "", errors.New("$XDG_CONFIG_HOME is a relative path")
		}
		return d, nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config"), nil
	}
	return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME is set")
}
