package remote

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLooseIsCommitTree: the chain agentx writes as loose objects is, byte
// for byte, the one git commit-tree makes of the same commits (same ids),
// on no parent, one, and a merge's two; git fsck finds nothing wrong;
// objects are read-only and no temporary file is left.
func TestLooseIsCommitTree(t *testing.T) {
	ctx := context.Background()
	g := gitRepo(t)
	at := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	g.Now = func() time.Time { return at }
	g.settings(ctx)
	require.Equal(t, filepath.Join(g.Dir, ".git", "objects"), g.objectDir)
	commits := []Commit{
		{Data: []byte(`{"issue":7,"clarifications":[]}` + "\n"), Message: "CLR-7-001 asked by engineer of architect"},
		{Data: []byte(`{"issue":7,"clarifications":[1]}` + "\n"), Message: "CLR-7-001 answered\n\nwith a body: \"quotes\", tabs\tand\r\nCRLF"},
		{Data: []byte{}, Message: ""},
	}
	a, err := g.commitTree(ctx, 7, commits[0], nil)
	require.NoError(t, err)
	b, err := g.commitTree(ctx, 7, commits[1], nil)
	require.NoError(t, err)
	for _, parents := range [][]string{nil, {a}, {a, b}} {
		loose, err := g.looseChain(g.objectDir, false, 7, parents, commits)
		require.NoError(t, err)
		want := parents
		var ct string
		for _, c := range commits {
			ct, err = g.commitTree(ctx, 7, c, want)
			require.NoError(t, err)
			want = []string{ct}
		}
		assert.Equal(t, ct, loose, "on %v", parents)
	}
	_, err = g.looseChain(g.objectDir, true, 7, []string{b}, commits[:1]) // synced: the same
	require.NoError(t, err)
	gitT(t, g.Dir, "", "fsck", "--strict", "--no-dangling")

	err = filepath.WalkDir(g.objectDir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		assert.NotContains(t, d.Name(), "tmp_obj_", "left behind")
		if d.Type().IsRegular() && len(filepath.Base(filepath.Dir(p))) == 2 {
			info, err := d.Info()
			require.NoError(t, err)
			assert.Zero(t, info.Mode().Perm()&0o222, "%s is read-only", p)
		}
		return nil
	})
	require.NoError(t, err)

	_, err = g.looseChain(g.objectDir, false, 7, []string{"HEAD"}, commits)
	assert.ErrorContains(t, err, "is not a commit id")
}

// TestLooseNeverWritesOver: an object whose name is already taken (by a
// writer at the same moment, or anything else) is left as it is but for
// its time (freshened, as git does), and the
// same object written by many at once is stored once, whole.
func TestLooseNeverWritesOver(t *testing.T) {
	g := gitRepo(t)
	objects := filepath.Join(g.Dir, ".git", "objects")
	id := gitT(t, g.Dir, "x", "hash-object", "--stdin")
	name := filepath.Join(objects, id[:2], id[2:])
	require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o777))
	require.NoError(t, os.WriteFile(name, []byte("not mine"), 0o444))
	old := time.Now().Add(-30 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(name, old, old))
	got, err := (&looseWriter{objects: objects}).write("blob", []byte("x"))
	require.NoError(t, err)
	assert.Equal(t, id, got)
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, "not mine", string(data), "never written over")
	info, err := os.Stat(name)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), info.ModTime(), time.Hour, "freshened, so that a prune leaves it")

	var wg sync.WaitGroup
	ids := make([]string, 16)
	for i := range ids {
		wg.Go(func() {
			var err error
			ids[i], err = (&looseWriter{objects: objects}).write("blob", []byte("the same ledger\n"))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	for _, got := range ids {
		assert.Equal(t, ids[0], got)
	}
	assert.Equal(t, "the same ledger", gitT(t, g.Dir, "", "cat-file", "blob", ids[0]))
	left, err := filepath.Glob(filepath.Join(objects, "*", "tmp_obj_*"))
	require.NoError(t, err)
	assert.Empty(t, left)
}

// TestLooseWhere: agentx writes the objects itself only where it knows git
// keeps them, and stores them where git then finds them: a repository, a
// workspace in one of its subdirectories, a linked worktree (and a
// subdirectory of one); not a SHA-256 repository, a shared one, or one
// moved by GIT_OBJECT_DIRECTORY or GIT_DIR. Where it does not, a chain is
// still made, by fast-import.
func TestLooseWhere(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, repo string) (dir string) // the workspace
		env   [2]string
		loose bool
	}{
		{"a repository", func(t *testing.T, repo string) string { return repo }, [2]string{}, true},
		{"a subdirectory", func(t *testing.T, repo string) string {
			d := filepath.Join(repo, "services", "api")
			require.NoError(t, os.MkdirAll(d, 0o755))
			return d
		}, [2]string{}, true},
		{"a linked worktree", func(t *testing.T, repo string) string {
			gitT(t, repo, "", "commit", "--quiet", "--allow-empty", "-m", "first")
			wt := filepath.Join(t.TempDir(), "wt")
			gitT(t, repo, "", "worktree", "add", "--quiet", wt)
			return wt
		}, [2]string{}, true},
		{"a subdirectory of a linked worktree", func(t *testing.T, repo string) string {
			gitT(t, repo, "", "commit", "--quiet", "--allow-empty", "-m", "first")
			wt := filepath.Join(t.TempDir(), "wt")
			gitT(t, repo, "", "worktree", "add", "--quiet", wt)
			d := filepath.Join(wt, "sub")
			require.NoError(t, os.MkdirAll(d, 0o755))
			return d
		}, [2]string{}, true},
		{"a symbolic link to a subdirectory, from inside another repository", func(t *testing.T, repo string) string {
			d := filepath.Join(repo, "services", "api")
			require.NoError(t, os.MkdirAll(d, 0o755))
			home := t.TempDir() // a repository of its own, holding a link to the workspace
			gitT(t, home, "", "init", "--quiet")
			link := filepath.Join(home, "api")
			require.NoError(t, os.Symlink(d, link))
			return link
		}, [2]string{}, true},
		{"SHA-256", func(t *testing.T, repo string) string {
			d := repo + "-256"
			gitT(t, repo, "", "init", "--quiet", "--object-format=sha256", d)
			return d
		}, [2]string{}, false},
		{"shared", func(t *testing.T, repo string) string {
			gitT(t, repo, "", "config", "core.sharedRepository", "group")
			return repo
		}, [2]string{}, false},
		{"GIT_OBJECT_DIRECTORY", func(t *testing.T, repo string) string { return repo },
			[2]string{"GIT_OBJECT_DIRECTORY", "objects"}, false},
		{"GIT_DIR", func(t *testing.T, repo string) string { return repo },
			[2]string{"GIT_DIR", "DIR/.git"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gitRepo(t)
			repo := g.Dir
			g.Dir = tc.setup(t, repo)
			if tc.env[0] != "" {
				v := strings.ReplaceAll(tc.env[1], "DIR", repo)
				if tc.env[0] == "GIT_OBJECT_DIRECTORY" {
					v = filepath.Join(repo, ".git", v)
				}
				t.Setenv(tc.env[0], v)
			}
			g.settings(ctx)
			if tc.loose {
				common := gitT(t, g.Dir, "", "rev-parse", "--path-format=absolute", "--git-common-dir")
				assert.Equal(t, filepath.Join(common, "objects"), g.objectDir)
			} else {
				assert.Empty(t, g.objectDir)
			}
			head, err := g.chain(ctx, 7, nil, []Commit{{Data: []byte("{}\n"), Message: "first"}})
			require.NoError(t, err)
			assert.Equal(t, "{}", gitT(t, g.Dir, "", "cat-file", "blob", head+":issue-7.json"), "git finds the chain")
		})
	}
}

// TestLooseFailsOverToFastImport: when agentx cannot write the objects
// itself, fast-import makes the chain.
func TestLooseFailsOverToFastImport(t *testing.T) {
	ctx := context.Background()
	g := gitRepo(t)
	g.settings(ctx)
	g.objectDir = filepath.Join(t.TempDir(), "gone", "objects")
	head, err := g.chain(ctx, 7, nil, []Commit{{Data: []byte("{}\n"), Message: "first"}})
	require.NoError(t, err)
	assert.Equal(t, "first", gitT(t, g.Dir, "", "log", "-1", "--format=%s", head))
	_, err = os.Stat(g.objectDir)
	assert.True(t, os.IsNotExist(err), "nothing made there: %v", err)
}

// TestSettingsOnOldGit: a git that knows no --show-scope (before 2.26)
// still says whether it signs; agentx then leaves the objects to it.
func TestSettingsOnOldGit(t *testing.T) {
	g := gitRepo(t)
	gitT(t, g.Dir, "", "config", "commit.gpgSign", "true")
	bin := t.TempDir()
	script := "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --show-scope ] && { echo \"error: unknown option \\`show-scope'\" >&2; exit 129; }; done\nexec '" + realGit(t) + "' \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx := context.Background()
	assert.NotEmpty(t, g.signArgs(ctx), "signing, read without --show-scope")
	assert.Empty(t, g.objectDir)
}

// TestLooseSettings: which settings git config prints let agentx write
// objects itself, and which leave it to fast-import.
func TestLooseSettings(t *testing.T) {
	g := gitRepo(t)
	config := filepath.Join(g.Dir, ".git", "config")
	for _, tc := range []struct {
		name  string
		set   [][3]string // scope, key, value
		loose bool
	}{
		{"ordinary", nil, true},
		{"sha1 said", [][3]string{{"local", "extensions.objectformat", "sha1"}}, true},
		{"sha256", [][3]string{{"local", "extensions.objectformat", "sha256"}}, false},
		{"worktree config", [][3]string{{"local", "extensions.worktreeconfig", "true"}}, true},
		{"partial clone", [][3]string{{"local", "extensions.partialclone", "origin"}}, true},
		{"reftable", [][3]string{{"local", "extensions.refstorage", "reftable"}}, true},
		{"a compatibility map", [][3]string{{"local", "extensions.compatobjectformat", "sha256"}}, false},
		{"an extension not known here", [][3]string{{"local", "extensions.somethingnew", "true"}}, false},
		{"shared group", [][3]string{{"local", "core.sharedrepository", "group"}}, false},
		{"shared umask", [][3]string{{"local", "core.sharedrepository", "umask"}}, true},
		{"the format version set globally only", [][3]string{{"global", "core.repositoryformatversion", "0"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s looseSettings
			if tc.name != "the format version set globally only" {
				s.take("local", "file:"+config, "core.repositoryformatversion", "0")
			}
			for _, kv := range tc.set {
				s.take(kv[0], "file:/somewhere/config", kv[1], kv[2])
			}
			if tc.loose {
				assert.Equal(t, filepath.Join(g.Dir, ".git", "objects"), g.objectsDir(s))
			} else {
				assert.Empty(t, g.objectsDir(s))
			}
		})
	}
}

// TestLooseMisplacedFallsBack: objects written where git does not look
// (a repository agentx took for this one) make the push fail with git's
// "bad object", which is no outage: the chain is made again by
// fast-import and pushed, and fast-import makes every chain after it.
func TestLooseMisplacedFallsBack(t *testing.T) {
	ctx := context.Background()
	g := gitRepo(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	gitT(t, g.Dir, "", "init", "--quiet", "--bare", bare)
	gitT(t, g.Dir, "", "remote", "add", "origin", bare)
	g.settings(ctx)
	other := gitRepo(t)
	g.objectDir = filepath.Join(other.Dir, ".git", "objects") // the wrong repository
	one, err := g.Push(ctx, 4, Snapshot{}, []Commit{{Data: []byte("{}\n"), Message: "one"}})
	require.NoError(t, err)
	assert.Equal(t, one.Version, gitT(t, bare, "", "rev-parse", g.Ref(4)), "landed")
	assert.True(t, g.looseOff.Load(), "fast-import from now on")
	two, err := g.Push(ctx, 4, one, []Commit{{Data: []byte("{ }\n"), Message: "two"}})
	require.NoError(t, err)
	assert.Equal(t, two.Version, gitT(t, bare, "", "rev-parse", g.Ref(4)))

	// A republished chain the same way (agentx sync --republish).
	g.looseOff.Store(false)
	three, err := g.Republish(ctx, 4, []string{two.Version}, two.Version, Commit{Data: []byte("{  }\n"), Message: "three"})
	require.NoError(t, err)
	assert.Equal(t, three.Version, gitT(t, bare, "", "rev-parse", g.Ref(4)), "republished")
	assert.True(t, g.looseOff.Load())

	_, err = g.exchange(ctx, "push", "--porcelain", "--", "origin", strings.Repeat("1", 40)+":refs/x/y")
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrOffline, "a missing object is no outage")
}

// TestSyncsLoose: which core.fsync values have git sync loose objects, and
// so the ones agentx writes.
func TestSyncsLoose(t *testing.T) {
	for value, want := range map[string]bool{
		"":                              false,
		"none":                          false,
		"pack,pack-metadata":            false,
		"loose-object":                  true,
		"objects":                       true,
		"committed":                     true,
		"added":                         true,
		"all":                           true,
		"All, -loose-object":            false,
		"objects,-loose-object":         false,
		"-loose-object,objects":         true,
		"loose-object,none":             false,
		"none, committed":               true,
		"reference,index":               false,
		"derived-metadata,loose-object": true,
	} {
		assert.Equal(t, want, syncsLoose(value), "core.fsync = %q", value)
	}
}
