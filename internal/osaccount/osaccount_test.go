//go:build unix

package osaccount

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	me := strconv.Itoa(os.Getuid())
	dir := t.TempDir()
	guarded := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(guarded, nil, 0o644))
	link := filepath.Join(dir, "link.toml")
	require.NoError(t, os.Symlink(guarded, link))
	other := strconv.Itoa(os.Getuid() + 1)
	tests := []struct {
		name     string
		accounts []string
		mode     os.FileMode
		path     string
		kind     string
	}{
		{"this account, a guarded file", []string{me}, 0o644, guarded, ""},
		{"this account among others", []string{other, me}, 0o600, guarded, ""},
		{"an account the list leaves out", []string{other}, 0o644, guarded, KindNotListed},
		{"a name this system does not know", []string{"no-such-account-here"}, 0o644, guarded, KindNotListed},
		{"the list writable by the group", []string{me}, 0o664, guarded, KindUnguarded},
		{"the list writable by anyone", []string{me}, 0o646, guarded, KindUnguarded},
		{"the list through a link", []string{me}, 0o644, link, KindUnguarded},
		{"the list missing", []string{me}, 0o644, filepath.Join(dir, "absent"), KindUnguarded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.Chmod(guarded, tt.mode))
			err := Check(tt.accounts, tt.path)
			if tt.kind == "" {
				assert.NoError(t, err)
				return
			}
			var e *Error
			require.True(t, errors.As(err, &e), "%v", err)
			assert.Equal(t, tt.kind, e.Kind)
		})
	}
}

func TestCheckParent(t *testing.T) {
	me := strconv.Itoa(os.Getuid())
	dir := t.TempDir()
	tests := []struct {
		mode os.FileMode
		ok   bool
	}{
		{0o755, true},                 // only its owner writes in it
		{0o775 | os.ModeSticky, true}, // others write, only an entry's owner renames it
		{0o775, false},                // others could rename .agentx away
		{0o777, false},
	}
	for _, tt := range tests {
		require.NoError(t, os.Chmod(dir, tt.mode))
		err := CheckParent([]string{me}, dir)
		assert.Equal(t, tt.ok, err == nil, "mode %v: %v", tt.mode, err)
	}
	require.NoError(t, os.Chmod(dir, 0o700))
}
