package remote

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitRepo makes an empty repository for the commit path's tests.
func gitRepo(t testing.TB) *Git {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	gitT(t, dir, "", "init", "--quiet")
	return &Git{Dir: dir, Remote: "origin", Refs: "refs/agentx/clarifications", Timeout: time.Minute, Host: "ci<runner> 7"}
}

// TestGitIdentity is the identity the tests' own git commands commit as
// (the developer's git configuration may have none); the external test
// package uses it too.
var TestGitIdentity = []string{"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
	"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com"}

func gitT(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), TestGitIdentity...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	require.NoError(t, err, "git %v", args)
	return strings.TrimSpace(string(out))
}

// commitObject is what git says a commit holds, but its time lines.
type commitObject struct {
	tree, ident, message string
	parents              []string
	files                string // the tree's listing
	blob                 string // the ledger's content
}

func readCommit(t *testing.T, g *Git, sha string) commitObject {
	t.Helper()
	raw := gitT(t, g.Dir, "", "cat-file", "commit", sha)
	head, msg, _ := strings.Cut(raw, "\n\n")
	c := commitObject{message: msg}
	for _, l := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(l, " ")
		switch k {
		case "tree":
			c.tree = v
		case "parent":
			c.parents = append(c.parents, v)
		case "author", "committer":
			f := strings.Fields(v) // NAME <EMAIL> SECONDS ZONE: the time differs
			c.ident += k + " " + strings.Join(f[:len(f)-2], " ") + " " + f[len(f)-1] + "\n"
		}
	}
	c.files = gitT(t, g.Dir, "", "ls-tree", sha)
	c.blob = gitT(t, g.Dir, "", "cat-file", "blob", sha+":issue-7.json")
	return c
}

// TestFastImportIsCommitTree: a chain made by git fast-import, one process,
// is the chain hash-object, mktree and commit-tree make of the same
// commits: the same trees (so the same ledgers), messages with the host:
// line, parents and committer, with and without a parent to start on,
// and a merge's two parents; and no ref is written.
func TestFastImportIsCommitTree(t *testing.T) {
	ctx := context.Background()
	g := gitRepo(t)
	commits := []Commit{
		{Data: []byte(`{"issue":7,"clarifications":[]}` + "\n"), Message: "CLR-7-001 asked by engineer of architect"},
		{Data: []byte(`{"issue":7,"clarifications":[1]}` + "\n"), Message: "CLR-7-001 answered by architect\n\nwith a body: \"quotes\", tabs\tand\r\nCRLF"},
		{Data: []byte{}, Message: ""},
	}
	refsBefore := gitT(t, g.Dir, "", "for-each-ref")

	for _, base := range []string{"", "one", "merge"} {
		t.Run("on "+base, func(t *testing.T) {
			var parents []string
			switch base {
			case "one":
				p, err := g.commitTree(ctx, 7, commits[0], nil)
				require.NoError(t, err)
				parents = []string{p}
			case "merge":
				a, err := g.commitTree(ctx, 7, commits[0], nil)
				require.NoError(t, err)
				b, err := g.commitTree(ctx, 7, commits[1], nil)
				require.NoError(t, err)
				parents = []string{a, b}
			}
			fi, err := g.fastImport(ctx, 7, parents, commits)
			require.NoError(t, err)
			want := parents
			var ct string
			for _, c := range commits {
				ct, err = g.commitTree(ctx, 7, c, want)
				require.NoError(t, err)
				want = []string{ct}
			}
			// Walk both chains back together.
			a, b := fi, ct
			for range commits {
				ca, cb := readCommit(t, g, a), readCommit(t, g, b)
				assert.Equal(t, cb.tree, ca.tree)
				assert.Equal(t, cb.files, ca.files)
				assert.Equal(t, cb.blob, ca.blob)
				assert.Equal(t, cb.message, ca.message)
				assert.Contains(t, ca.message, "\n\nhost: ci-runner--7")
				assert.Equal(t, cb.ident, ca.ident)
				require.Equal(t, len(cb.parents), len(ca.parents))
				if len(ca.parents) > 0 && ca.parents[0] != parents0(parents) {
					a, b = ca.parents[0], cb.parents[0]
					continue
				}
				assert.Equal(t, cb.parents, ca.parents, "the chain starts on the same parents")
			}
		})
	}
	assert.Equal(t, refsBefore, gitT(t, g.Dir, "", "for-each-ref"), "fast-import wrote no ref")
	_, err := os.Stat(filepath.Join(g.Dir, ".git", strings.ReplaceAll(importRef, "/", string(filepath.Separator))))
	assert.True(t, os.IsNotExist(err), "no %s: %v", importRef, err)
}

func parents0(p []string) string {
	if len(p) == 0 {
		return ""
	}
	return p[0]
}

// TestBadParentIsRefused: a parent that is not a commit id never reaches
// fast-import's stream (it could carry a command of its own), nor
// commit-tree's command line, nor a loose commit: chain refuses it first.
func TestBadParentIsRefused(t *testing.T) {
	g := gitRepo(t)
	_, err := g.chain(context.Background(), 7, []string{"HEAD\nreset refs/heads/main"}, []Commit{{Data: []byte("{}"), Message: "m"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a commit id")
	assert.Empty(t, gitT(t, g.Dir, "", "for-each-ref"))
}

// TestSigningGoesThroughCommitTree: with git set to sign (commit.gpgSign,
// an SSH key), or with [remote] require_signed, a chain is made with
// commit-tree, which signs; fast-import, which cannot, is not used.
func TestSigningGoesThroughCommitTree(t *testing.T) {
	ctx := context.Background()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	commits := []Commit{{Data: []byte("{}\n"), Message: "first"}, {Data: []byte("{ }\n"), Message: "second"}}

	g := gitRepo(t)
	key := filepath.Join(t.TempDir(), "key")
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "agentx@test", "-f", key).CombinedOutput()
	require.NoError(t, err, "%s", out)
	gitT(t, g.Dir, "", "config", "gpg.format", "ssh")
	gitT(t, g.Dir, "", "config", "user.signingKey", key+".pub")
	gitT(t, g.Dir, "", "config", "commit.gpgSign", "true")
	head, err := g.chain(ctx, 7, nil, commits)
	require.NoError(t, err)
	for _, sha := range []string{head, head + "^"} {
		raw := gitT(t, g.Dir, "", "cat-file", "commit", sha)
		assert.Contains(t, raw, "-----BEGIN SSH SIGNATURE-----", "%s is signed", sha)
	}

	// require_signed alone: commit-tree too (unsigned: git is not set to sign).
	g = gitRepo(t)
	g.RequireSigned = true
	bin := t.TempDir()
	log := filepath.Join(bin, "log")
	require.NoError(t, os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\necho \"$*\" >> '"+log+"'\nexec '"+realGit(t)+"' \"$@\"\n"), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, err = g.chain(ctx, 7, nil, commits)
	require.NoError(t, err)
	ran, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(ran), " commit-tree "), "%s", ran)
	assert.NotContains(t, string(ran), "fast-import")

	// Neither, in an ordinary repository: the settings read, and agentx
	// writes the chain's objects itself; in a SHA-256 one, the settings
	// read, then one fast-import for the chain.
	g.RequireSigned = false
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"sha1", []string{"config"}},
		{"sha256", []string{"config", "fast-import"}},
	} {
		if tc.format == "sha256" {
			g = gitRepo(t)
			gitT(t, t.TempDir(), "", "init", "--quiet", "--object-format=sha256", g.Dir+"-256")
			g.Dir += "-256"
		}
		_ = os.Remove(log)
		g.settingsOnce = sync.Once{}
		head, err := g.chain(ctx, 7, nil, commits)
		require.NoError(t, err, tc.format)
		ran, err = os.ReadFile(log)
		require.NoError(t, err)
		var cmds []string
		for _, l := range strings.Split(strings.TrimSpace(string(ran)), "\n") {
			f := strings.Fields(l)
			for i := 0; i < len(f); i++ { // past -C DIR and -c KEY=VALUE
				if f[i] == "-C" || f[i] == "-c" {
					i++
					continue
				}
				cmds = append(cmds, f[i])
				break
			}
		}
		assert.Equal(t, tc.want, cmds, "%s: %s", tc.format, ran)
		assert.Equal(t, "second", gitT(t, g.Dir, "", "log", "-1", "--format=%s", head), tc.format)
		assert.Equal(t, "{ }", gitT(t, g.Dir, "", "cat-file", "blob", head+":issue-7.json"), tc.format)
	}
}

func realGit(t *testing.T) string {
	p, err := exec.LookPath("git")
	require.NoError(t, err)
	return p
}

// BenchmarkCommit is the cost of one commit of a 20 KB ledger written by
// agentx as loose objects, made by fast-import (one git process), and by
// hash-object, mktree and commit-tree (three).
func BenchmarkCommit(b *testing.B) {
	ctx := context.Background()
	g := gitRepo(b)
	data := []byte(strings.Repeat(`{"id":"CLR-7-001","question":"which retry budget applies?"},`, 300))
	for _, way := range []struct {
		name string
		make func(c Commit) (string, error)
	}{
		{"loose", func(c Commit) (string, error) { return g.looseChain(g.Dir+"/.git/objects", false, 7, nil, []Commit{c}) }},
		{"fast-import", func(c Commit) (string, error) { return g.fastImport(ctx, 7, nil, []Commit{c}) }},
		{"commit-tree", func(c Commit) (string, error) { return g.commitTree(ctx, 7, c, nil) }},
	} {
		b.Run(way.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := way.make(Commit{Data: append(data, byte('0'+i%10)), Message: "m"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCommitSettings: one git config tells whether git signs commits (a
// git boolean in any of its spellings, the last one set winning) and
// whether the user chose what git syncs to disk, which fast-import then
// keeps to.
func TestCommitSettings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		config  string // appended to .git/config
		signing bool
		fsync   bool
	}{
		{"nothing set", "", false, false},
		{"gpgSign true", "[commit]\n\tgpgSign = true\n", true, false},
		{"gpgSign yes", "[commit]\n\tgpgsign = yes\n", true, false},
		{"gpgSign 1", "[commit]\n\tgpgSign = 1\n", true, false},
		{"gpgSign without a value", "[commit]\n\tgpgSign\n", true, false},
		{"gpgSign off", "[commit]\n\tgpgSign = off\n", false, false},
		{"the last one wins", "[commit]\n\tgpgSign = true\n[commit]\n\tgpgSign = false\n", false, false},
		{"core.fsync", "[core]\n\tfsync = all\n", false, true},
		{"core.fsyncObjectFiles", "[core]\n\tfsyncObjectFiles = true\n", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gitRepo(t)
			f, err := os.OpenFile(filepath.Join(g.Dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString(tc.config)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			ctx := context.Background()
			assert.Equal(t, tc.signing, len(g.signArgs(ctx)) > 0, "signing")
			if tc.fsync {
				assert.Empty(t, g.importArgs(ctx), "the user's core.fsync is kept")
			} else {
				assert.Equal(t, []string{"-c", "core.fsync=-pack,-pack-metadata"}, g.importArgs(ctx))
			}
		})
	}
}

// TestPushMovesTheLocalRef: after a push the local ref is the remote's,
// whether the remote is named (the push moves it as a remote-tracking
// ref) or given as a path or URL (update-ref); a refused push moves
// neither.
func TestPushMovesTheLocalRef(t *testing.T) {
	for _, named := range []bool{true, false} {
		t.Run(map[bool]string{true: "named", false: "path"}[named], func(t *testing.T) {
			g := gitRepo(t)
			bare := filepath.Join(t.TempDir(), "remote.git")
			gitT(t, g.Dir, "", "init", "--quiet", "--bare", bare)
			gitT(t, g.Dir, "", "remote", "add", "origin", bare)
			if !named {
				g.Remote = bare
			}
			ctx := context.Background()
			one, err := g.Push(ctx, 4, Snapshot{}, []Commit{{Data: []byte("{}\n"), Message: "one"}})
			require.NoError(t, err)
			two, err := g.Push(ctx, 4, one, []Commit{{Data: []byte("{ }\n"), Message: "two"}})
			require.NoError(t, err)
			assert.Equal(t, two.Version, gitT(t, bare, "", "rev-parse", g.Ref(4)))
			assert.Equal(t, two.Version, gitT(t, g.Dir, "", "rev-parse", g.Ref(4)), "the local ref follows")
			_, err = g.Push(ctx, 4, one, []Commit{{Data: []byte("{  }\n"), Message: "stale"}})
			require.ErrorIs(t, err, ErrMoved)
			assert.Equal(t, two.Version, gitT(t, g.Dir, "", "rev-parse", g.Ref(4)))
			assert.Empty(t, gitT(t, g.Dir, "", "for-each-ref", "refs/remotes/"), "no other ref written")
		})
	}
}

func TestRemoteName(t *testing.T) {
	for in, want := range map[string]bool{"origin": true, "up-stream_2.x": true, "": false, "-x": false, ".hidden": false,
		"../remote.git": false, "/srv/remote.git": false, "git@host:repo.git": false, "https://host/repo": false, "a b": false} {
		assert.Equal(t, want, remoteName(in), in)
	}
}
