package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// TestDoctorGitignore: each pattern agentx writes to state/.gitignore must
// have a line there; --fix appends what is missing after what is there,
// byte for byte, or writes the file when there is none. A file far larger
// than agentx writes is reported and left alone.
func TestDoctorGitignore(t *testing.T) {
	const want = "# agentx\n*.lock\n*.lock.tmp-*\n\n# temp\n.*.tmp-*\ncache/\n"
	for _, tc := range []struct {
		name    string
		have    *string // nil: no file
		missing string  // in the problem; "" for no finding
		after   string  // the file after --fix
	}{
		{name: "as written", have: ptr(want)},
		{name: "reordered, spaced, CRLF", have: ptr("cache/\r\n  *.lock.tmp-*\n.*.tmp-*\n*.lock\n")},
		{name: "an earlier version's", have: ptr("*.lock\n.*.tmp-*\n# mine\nbuild/\n"), missing: "lacks *.lock.tmp-* cache/:",
			after: "*.lock\n.*.tmp-*\n# mine\nbuild/\n# added by agentx doctor --fix\n*.lock.tmp-*\ncache/\n"},
		{name: "no final newline", have: ptr("*.lock\n.*.tmp-*\ncache/"), missing: "lacks *.lock.tmp-*:",
			after: "*.lock\n.*.tmp-*\ncache/\n# added by agentx doctor --fix\n*.lock.tmp-*\n"},
		{name: "a pattern inside a longer line does not count", have: ptr("*.lock.tmp-* # no\n*.lock\n.*.tmp-*\ncache/\n"), missing: "lacks *.lock.tmp-*:",
			after: "*.lock.tmp-* # no\n*.lock\n.*.tmp-*\ncache/\n# added by agentx doctor --fix\n*.lock.tmp-*\n"},
		{name: "empty", have: ptr(""), missing: "lacks *.lock *.lock.tmp-* .*.tmp-* cache/:",
			after: "# added by agentx doctor --fix\n*.lock\n*.lock.tmp-*\n.*.tmp-*\ncache/\n"},
		{name: "missing", missing: "is missing", after: want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := ledger.NewStore(dir, lock.Options{}, time.Now)
			path := filepath.Join(dir, ".gitignore")
			if tc.have != nil {
				require.NoError(t, os.WriteFile(path, []byte(*tc.have), 0o644))
			}
			for _, fix := range []bool{false, true} {
				r := &Report{}
				checkGitignore(s, Options{Fix: fix, Gitignore: want}, r)
				if tc.missing == "" {
					assert.Empty(t, r.Findings)
					continue
				}
				require.Len(t, r.Findings, 1)
				f := r.Findings[0]
				assert.Equal(t, CheckGitignore, f.Check)
				assert.Equal(t, Warning, f.Severity, "agentx works without it: a warning")
				assert.Contains(t, f.Problem, tc.missing)
				assert.Equal(t, fix, f.Fixed)
			}
			b, err := os.ReadFile(path)
			if tc.have == nil && tc.missing == "" {
				require.ErrorIs(t, err, os.ErrNotExist)
				return
			}
			require.NoError(t, err)
			if tc.missing == "" {
				assert.Equal(t, *tc.have, string(b), "a file with every pattern is left as it is")
				return
			}
			assert.Equal(t, tc.after, string(b))
			r := &Report{}
			checkGitignore(s, Options{Gitignore: want}, r)
			assert.Empty(t, r.Findings, "after --fix")
		})
	}

	t.Run("too large", func(t *testing.T) {
		dir := t.TempDir()
		s := ledger.NewStore(dir, lock.Options{}, time.Now)
		big := strings.Repeat("x\n", maxGitignore)
		path := filepath.Join(dir, ".gitignore")
		require.NoError(t, os.WriteFile(path, []byte(big), 0o644))
		r := &Report{}
		checkGitignore(s, Options{Fix: true, Gitignore: want}, r)
		require.Len(t, r.Findings, 1)
		assert.False(t, r.Findings[0].Fixed)
		assert.Contains(t, r.Findings[0].Problem, "larger than")
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, len(big), len(b), "left as it was")
	})

	t.Run("skipped without patterns", func(t *testing.T) {
		r, err := Run(context.Background(), ledger.NewStore(t.TempDir(), lock.Options{}, time.Now), Options{})
		require.NoError(t, err)
		for _, f := range r.Findings {
			assert.NotEqual(t, CheckGitignore, f.Check, "no .gitignore, and nothing asked of it")
		}
	})
}

func ptr(s string) *string { return &s }
