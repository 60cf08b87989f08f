package remote

import (
	"bytes"
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
