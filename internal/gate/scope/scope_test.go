package scope

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMatch(t *testing.T) {
	scope := []string{"src/components/**", "tests/**/*_test.go", "package.json", "docs/"}
	tests := []struct {
		path string
		want bool
	}{
		{"src/components/Button.tsx", true},
		{"src/components/forms/Input.tsx", true},
		{"src/components", true}, // ** matches no element too
		{"src/api/client.ts", false},
		{"src/componentsX/a.ts", false},
		{"tests/a_test.go", true},
		{"tests/unit/deep/b_test.go", true},
		{"tests/unit/b.go", false},
		{"package.json", true},
		{"sub/package.json", false}, // an explicit file is that file
		{"package.json.bak", false},
		{"docs/guide/intro.md", true},
		{"README.md", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Match(scope, tt.path), tt.path)
	}
	assert.True(t, Match(nil, "anything/at/all"), "no scope: unrestricted")
	assert.True(t, Match([]string{"**"}, "a/b/c"))
	assert.True(t, Match([]string{"*.md"}, "README.md"))
	assert.False(t, Match([]string{"*.md"}, "docs/a.md"), "* stays within one element")
}

func TestResolve(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "src", "components"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "src", "api"), 0o755))
	if runtime.GOOS != "windows" {
		require.NoError(t, os.Symlink(filepath.Join(root, "src", "api"), filepath.Join(root, "src", "components", "api-link")))
		require.NoError(t, os.Symlink(outside, filepath.Join(root, "src", "components", "out")))
		require.NoError(t, os.WriteFile(filepath.Join(root, "src", "api", "real.ts"), nil, 0o644))
		require.NoError(t, os.Symlink(filepath.Join(root, "src", "api", "real.ts"), filepath.Join(root, "src", "components", "file-link.ts")))
	}
	tests := []struct {
		cwd, path string
		rel       string
		inside    bool
		links     bool
	}{
		{"", "src/components/new.tsx", "src/components/new.tsx", true, false},
		{"", filepath.Join(root, "src", "components", "a.tsx"), "src/components/a.tsx", true, false},
		{"", "src/components/../api/x.ts", "src/api/x.ts", true, false},
		{filepath.Join(root, "src", "components"), "../../package.json", "package.json", true, false},
		{"", "src/components/not/yet/there.ts", "src/components/not/yet/there.ts", true, false},
		{"", "../elsewhere.txt", "", false, false},
		{"", "src/components/api-link/x.ts", "src/api/x.ts", true, true},
		{"", "src/components/file-link.ts", "src/api/real.ts", true, true},
		{"", "src/components/out/x.ts", "", false, true},
	}
	for _, tt := range tests {
		if tt.links && runtime.GOOS == "windows" {
			continue
		}
		rel, inside, err := Resolve(root, tt.cwd, tt.path)
		require.NoError(t, err, tt.path)
		assert.Equal(t, tt.inside, inside, tt.path)
		if tt.inside {
			assert.Equal(t, tt.rel, rel, tt.path)
		}
	}
	_, _, err := Resolve(root, "", "")
	assert.Error(t, err)
}

func TestParsePayload(t *testing.T) {
	p, target, err := ParsePayload([]byte(`{"session_id":"s","hook_event_name":"PreToolUse","cwd":"/repo","tool_name":"Edit","tool_input":{"file_path":"/repo/src/a.go","old_string":"a","new_string":"b"},"tool_use_id":"t1"}`))
	require.NoError(t, err)
	assert.Equal(t, "Edit", p.ToolName)
	assert.Equal(t, "/repo/src/a.go", target)
	_, target, err = ParsePayload([]byte(`{"tool_name":"NotebookEdit","tool_input":{"notebook_path":"/repo/n.ipynb","new_source":"x"}}`))
	require.NoError(t, err)
	assert.Equal(t, "/repo/n.ipynb", target)
	_, target, err = ParsePayload([]byte(`{"tool_name":"Read","tool_input":{"file_path":"/etc/passwd"}}`))
	require.NoError(t, err)
	assert.Empty(t, target, "reads are never restricted")
	for _, bad := range []string{``, `[]`, `{}`, `{"tool_name":"Write","tool_input":{}}`, `{"tool_name":"Write","tool_input":"x"}`} {
		_, _, err := ParsePayload([]byte(bad))
		assert.Error(t, err, bad)
	}
}

func TestHookDeny(t *testing.T) {
	b, err := HookDeny("outside scope")
	require.NoError(t, err)
	assert.JSONEq(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"outside scope"}}`, string(b))
}

// FuzzParsePayload: whatever arrives on a hook's stdin, parsing never
// panics, a write tool always names the file it writes, a tool that does
// not write names none, and the deny answer is valid JSON.
func FuzzParsePayload(f *testing.F) {
	f.Add([]byte(`{"tool_name":"Write","tool_input":{"file_path":"/r/a","content":"x"}}`))
	f.Add([]byte(`{"tool_name":"MultiEdit","tool_input":{"file_path":"../../etc/x","edits":[]}}`))
	f.Add([]byte(`{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`))
	f.Add([]byte(`{"tool_name":"NotebookEdit","tool_input":{"file_path":"a","notebook_path":""}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, target, err := ParsePayload(data)
		if err != nil {
			return
		}
		if Writes(p.ToolName) != (target != "") {
			t.Fatalf("tool %q, target %q", p.ToolName, target)
		}
		b, err := HookDeny(target)
		if err != nil || !json.Valid(b) {
			t.Fatalf("deny answer: %v %q", err, b)
		}
	})
}

// FuzzMatch: matching never panics, and a valid pattern with no glob
// characters matches the path it spells.
func FuzzMatch(f *testing.F) {
	f.Add("src/**", "src/a/b.go")
	f.Add("**/*_test.go", "x_test.go")
	f.Fuzz(func(t *testing.T, pat, p string) {
		_ = Match([]string{pat}, p)
		if !strings.ContainsAny(pat, `*?[\`) && pat != "" && !strings.HasSuffix(pat, "/") && !Match([]string{pat}, pat) {
			t.Fatalf("%q does not match itself", pat)
		}
	})
}

// TestDanglingLinkJudgedByTarget: a link inside the scope to a file that
// does not exist yet is a write to where it points (Claude Code's Write
// follows it and creates the target): the target is judged, not the link.
func TestDanglingLinkJudgedByTarget(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "src", "components"), 0o755))
	link := filepath.Join(root, "src", "components", "settings.json")
	require.NoError(t, os.Symlink("../../.claude/settings.local.json", link))
	rel, inside, err := Resolve(root, "", "src/components/settings.json")
	require.NoError(t, err)
	assert.True(t, inside)
	assert.Equal(t, ".claude/settings.local.json", rel)
	assert.False(t, Match([]string{"src/components/**"}, rel), "the write lands outside the scope")

	// a chain of links, the last one dangling, and a loop
	require.NoError(t, os.Symlink("settings.json", filepath.Join(root, "src", "components", "chain.json")))
	rel, _, err = Resolve(root, "", "src/components/chain.json")
	require.NoError(t, err)
	assert.Equal(t, ".claude/settings.local.json", rel)
	require.NoError(t, os.Symlink("loop-b", filepath.Join(root, "src", "components", "loop-a")))
	require.NoError(t, os.Symlink("loop-a", filepath.Join(root, "src", "components", "loop-b")))
	_, _, err = Resolve(root, "", "src/components/loop-a")
	assert.Error(t, err, "a loop is an error, never allowed")
}

// TestPayloadKeysExact: tool_input's keys match exactly: a File_Path beside
// file_path does not decide the path judged, and a key given twice is
// refused.
func TestPayloadKeysExact(t *testing.T) {
	_, target, err := ParsePayload([]byte(`{"tool_name":"Write","tool_input":{"file_path":"../../etc/x","File_Path":"src/components/a.ts","content":"x"}}`))
	require.NoError(t, err)
	assert.Equal(t, "../../etc/x", target)
	_, _, err = ParsePayload([]byte(`{"tool_name":"Write","tool_input":{"file_path":"src/a.ts","file_path":"../x"}}`))
	assert.Error(t, err)
	_, target, err = ParsePayload([]byte("{\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"src/\xff.ts\"}}"))
	require.NoError(t, err, "invalid UTF-8 is not refused (it reads as U+FFFD, as before)")
	assert.Equal(t, "src/\uFFFD.ts", target)
}

// TestHookDenyStable: the deny decision is the same bytes every time (the
// docs and hooks that match on it rely on its key order).
func TestHookDenyStable(t *testing.T) {
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}` + "\n"
	for range 50 {
		b, err := HookDeny("no")
		require.NoError(t, err)
		require.Equal(t, want, string(b))
	}
}
