package remote

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func treeEntry(mode, name string, id byte) []byte {
	return append([]byte(mode+" "+name+"\x00"), bytes.Repeat([]byte{id}, 20)...)
}

func TestLedgerEntry(t *testing.T) {
	for _, tc := range []struct {
		name string
		tree []byte
		want string // blob id, or the error's words
	}{
		{"the ledger alone", treeEntry("100644", "issue-5.json", 0xab), strings.Repeat("ab", 20)},
		{"executable is still a file", treeEntry("100755", "issue-5.json", 0x01), strings.Repeat("01", 20)},
		{"a symbolic link", treeEntry("120000", "issue-5.json", 0x01), "symbolic link"},
		{"a directory", treeEntry("40000", "issue-5.json", 0x01), "not a regular file"},
		{"an extra entry", append(treeEntry("100644", "issue-5.json", 1), treeEntry("100644", "x", 2)...), `holds "x" besides`},
		{"another issue's file", treeEntry("100644", "issue-6.json", 1), "besides issue-5.json"},
		{"empty", nil, "has no file issue-5.json"},
		{"truncated", treeEntry("100644", "issue-5.json", 1)[:20], "cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ledgerEntry(tc.tree, 20, "issue-5.json")
			if err != nil {
				assert.Contains(t, err.Error(), tc.want)
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseCommit(t *testing.T) {
	tree, p1, p2 := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	c, err := parseCommit("x", []byte("tree "+tree+"\nparent "+p1+"\nparent "+p2+"\nauthor a <a> 1700000000 +0000\ncommitter a <a> 1700000001 +0000\n\nCLR-1-001 asked\n\nhost: h1\n"))
	require.NoError(t, err)
	assert.Equal(t, tree, c.Tree)
	assert.Equal(t, []string{p1, p2}, c.Parents)
	assert.Equal(t, int64(1700000001), c.Time.Unix())
	_, host := parseMessage(c.Message)
	assert.Equal(t, "h1", host)
	_, err = parseCommit("x", []byte("tree nope\n\nmsg"))
	assert.Error(t, err)
	_, err = parseCommit("x", []byte("tree "+tree+"\nparent ../x\n\nmsg"))
	assert.Error(t, err)
}

// FuzzObjects: a tree or commit from the remote never crashes the reader,
// and what it accepts is well formed.
func FuzzObjects(f *testing.F) {
	f.Add(treeEntry("100644", "issue-5.json", 1), []byte("tree "+strings.Repeat("a", 40)+"\n\nm"))
	f.Add(append(treeEntry("120000", "issue-5.json", 1), 0), []byte("parent x\n"))
	f.Fuzz(func(t *testing.T, tree, commit []byte) {
		if id, err := ledgerEntry(tree, 20, "issue-5.json"); err == nil && !isHexID(id) {
			t.Fatalf("accepted a blob id %q", id)
		}
		if c, err := parseCommit("x", commit); err == nil {
			if !isHexID(c.Tree) {
				t.Fatalf("accepted tree %q", c.Tree)
			}
			for _, p := range c.Parents {
				if !isHexID(p) {
					t.Fatalf("accepted parent %q", p)
				}
			}
		}
	})
}

// TestLooseReadsAsGit: an object read from its loose file is what git
// cat-file gives, without starting git; a packed object, a corrupt loose
// file, a ref that is packed or missing, and a repository with replace
// refs go to git, which answers as before.
func TestLooseReadsAsGit(t *testing.T) {
	g := gitRepo(t)
	ctx := context.Background()
	bare := filepath.Join(t.TempDir(), "remote.git")
	gitT(t, g.Dir, "", "init", "--quiet", "--bare", bare)
	gitT(t, g.Dir, "", "remote", "add", "origin", bare)
	ledgerData := []byte(`{"issue_number":6,"clarifications":[]}` + "\n")
	snap, err := g.Push(ctx, 6, Snapshot{}, []Commit{{Data: ledgerData, Message: "one"}})
	require.NoError(t, err)
	ref := g.Ref(6)

	viaGit := func(name, typ string) []byte {
		t.Helper()
		cf, err := startCatFile(ctx, g.Dir)
		require.NoError(t, err)
		defer cf.close()
		data, err := cf.contents(name, typ, MaxShared)
		require.NoError(t, err)
		return data
	}
	o, err := g.objects(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, o.dir, "an ordinary repository is read directly")
	sha, err := o.resolve(ref)
	require.NoError(t, err)
	assert.Equal(t, snap.Version, sha)
	c, data, err := g.readAt(o, 6, sha)
	require.NoError(t, err)
	assert.Equal(t, ledgerData, data)
	commit, err := o.contents(sha, "commit", maxObject)
	require.NoError(t, err)
	assert.Equal(t, viaGit(sha, "commit"), commit)
	tree, err := o.contents(c.Tree, "tree", maxObject)
	require.NoError(t, err)
	assert.Equal(t, viaGit(c.Tree, "tree"), tree)
	assert.Nil(t, o.cf, "no git process for loose objects and a loose ref")

	_, err = o.contents(c.Tree, "blob", maxObject)
	assert.ErrorContains(t, err, "is a tree, not a blob")
	_, err = o.contents(sha, "commit", 10)
	var big *tooLargeError
	require.ErrorAs(t, err, &big)
	assert.Equal(t, int64(len(commit)), big.size, "refused from its size")
	o.close()

	// A corrupt loose file: not taken; git says what is wrong.
	path := filepath.Join(o.dir, c.Tree[:2], c.Tree[2:])
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(path, 0o644))
	bad := bytes.Clone(good)
	bad[len(bad)-3] ^= 0xff
	require.NoError(t, os.WriteFile(path, bad, 0o644))
	o, _ = g.objects(ctx)
	_, _, _, ok := o.loose(c.Tree, maxObject, true)
	assert.False(t, ok, "a loose file that does not hold what its name says")
	_, err = o.contents(c.Tree, "tree", maxObject)
	assert.Error(t, err)
	o.close()
	require.NoError(t, os.WriteFile(path, good, 0o644))

	// Packed objects and refs: git reads them.
	gitT(t, g.Dir, "", "pack-refs", "--all")
	gitT(t, g.Dir, "", "repack", "-a", "-d", "-q")
	gitT(t, g.Dir, "", "prune-packed")
	o, _ = g.objects(ctx)
	got, ok := o.refFile(ref)
	assert.True(t, ok, "a packed ref is read from packed-refs")
	assert.Equal(t, sha, got)
	_, data, err = g.readAt(o, 6, sha)
	require.NoError(t, err)
	assert.Equal(t, ledgerData, data)
	assert.NotNil(t, o.cf, "packed objects are read by git")
	missing, err := o.resolve(g.Ref(7))
	require.NoError(t, err)
	assert.Empty(t, missing)
	o.close()

	// Replace refs: git's readers follow them, so every read goes to git.
	gitT(t, g.Dir, "", "update-ref", "refs/replace/"+c.Tree, c.Tree)
	g = &Git{Dir: g.Dir, Remote: g.Remote, Refs: g.Refs, Timeout: g.Timeout, Host: g.Host} // a process looks once
	o, _ = g.objects(ctx)
	assert.Empty(t, o.dir, "replace refs: nothing read directly")
	o.close()
}
