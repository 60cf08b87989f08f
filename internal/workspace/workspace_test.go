package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

func TestFind(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(filepath.Join(root, Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	tests := []struct {
		name, explicit, start, want string
		notFound                    bool
	}{
		{"from the root", "", root, root, false},
		{"from below", "", deep, root, false},
		{"explicit", root, other, root, false},
		{"explicit below the root", deep, other, root, false},
		{"explicit relative below the root", filepath.Join(deep, "..", "b"), other, root, false},
		{"explicit without .agentx", other, root, "", true},
		{"nowhere", "", other, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(tt.explicit, tt.start)
			var nf *NotFoundError
			if tt.notFound {
				if !errors.As(err, &nf) {
					t.Fatalf("want *NotFoundError, got %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestInitRefusesThenForces(t *testing.T) {
	root := t.TempDir()
	files := map[string][]byte{"config.toml": []byte("a = 1\n")}
	if _, err := Init(root, files, false); err != nil {
		t.Fatal(err)
	}
	files["config.toml"] = []byte("a = 2\n")
	var ee *ExistsError
	if _, err := Init(root, files, false); !errors.As(err, &ee) {
		t.Fatalf("want *ExistsError, got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, Dir, "config.toml")); string(b) != "a = 1\n" {
		t.Fatalf("a refused init changed the file: %q", b)
	}
	if _, err := Init(root, files, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, Dir, "config.toml")); string(b) != "a = 2\n" {
		t.Fatalf("--force did not rewrite: %q", b)
	}
}

// TestInitNeverWritesThroughALink: init --force over a workspace where a
// file or a directory is a symbolic link refuses, writes nothing, and
// leaves what the link points at byte-identical.
func TestInitNeverWritesThroughALink(t *testing.T) {
	files := map[string][]byte{
		"config.toml": []byte("a = 2\n"),
		filepath.Join("workflows", "feature.toml"): []byte("b = 2\n"),
	}
	tests := []struct {
		name string
		link string // relative to root; points at a file or directory outside
		dir  bool
	}{
		{"config.toml", filepath.Join(Dir, "config.toml"), false},
		{"a workflow", filepath.Join(Dir, "workflows", "feature.toml"), false},
		{"the workflows directory", filepath.Join(Dir, "workflows"), true},
		{"the state directory", filepath.Join(Dir, "state"), true},
		{".agentx", Dir, true},
	}
	for _, tt := range tests {
		for _, force := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/force=%v", tt.name, force), func(t *testing.T) {
				root := t.TempDir()
				if _, err := Init(root, files, false); err != nil {
					t.Fatal(err)
				}
				outside := filepath.Join(t.TempDir(), "target")
				p := filepath.Join(root, tt.link)
				if tt.dir {
					if err := os.Rename(p, outside); err != nil {
						t.Fatal(err)
					}
				} else if err := os.WriteFile(outside, []byte("mine\n"), 0o600); err != nil {
					t.Fatal(err)
				} else if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, p); err != nil {
					t.Fatal(err)
				}
				before := snapshot(t, filepath.Dir(outside))

				written, err := Init(root, files, force)
				var se *atomicfile.SymlinkError
				if !errors.As(err, &se) {
					t.Fatalf("want *atomicfile.SymlinkError, got %v", err)
				}
				if se.Path != p || !strings.Contains(err.Error(), p) {
					t.Fatalf("the error names %q, want %q: %v", se.Path, p, err)
				}
				if len(written) != 0 {
					t.Fatalf("wrote %v", written)
				}
				if after := snapshot(t, filepath.Dir(outside)); !maps.Equal(before, after) {
					t.Fatalf("the files outside changed:\nbefore %v\nafter  %v", before, after)
				}
			})
		}
	}
}

// snapshot maps each file under dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStateGitignore holds state/.gitignore to the files agentx leaves in
// state/, with git itself: lock files, the lock being prepared, temp files
// (those a killed writer leaves too) and the per-machine caches are
// ignored; the ledgers, the event log and the records are not.
func TestStateGitignore(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	if out, err := exec.Command(git, "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(StateGitignore), 0o644); err != nil {
		t.Fatal(err)
	}
	ignored := func(name string) bool {
		c := exec.Command(git, "check-ignore", "-q", "--no-index", name)
		c.Dir = dir
		return c.Run() == nil
	}
	for _, name := range []string{
		"clarifications/issue-7.json.lock", "clarifications/issue-7.json.lock.queue", "agent-status.json.lock.takeover",
		"clarifications/issue-7.json.lock.tmp-held", "clarifications/issue-7.json.lock.tmp-3749226442",
		"clarifications/.issue-7.json.tmp-locked", "clarifications/.issue-7.json.tmp-4036774426",
		"clarifications/.issue-7.json.tmp-shadow", "index/.issue-7.json.tmp-1", "ledgers/.issue-7.layout.tmp-locked",
		"ledgers/issue-7.layout", "monitor/digest", "cache/workflows", "doctor/schema-ok.json", "evaluations/revise/issue-7.json",
		"index/issue-7.json", "index/built-v2", "agent-status.json", "hooks/issue-7.json", "inbox/engineer.json", "wake/engineer.json",
		"remote/issue-7.json", "remote/fetched.json", "github/outbox.json", "slack/posting.json",
		"clarifications/issue-7.json.local", "clarifications/issue-7.json.corrupt", "events.jsonl.corrupt-20260226T100000Z",
	} {
		if !ignored(name) {
			t.Errorf("%s is not ignored", name)
		}
	}
	for _, name := range []string{"clarifications/issue-7.json", "clarifications/issue-1000.json", "events.jsonl", "proposals.json", "evaluations/issue-7.json"} {
		if ignored(name) {
			t.Errorf("%s is ignored", name)
		}
	}
}
