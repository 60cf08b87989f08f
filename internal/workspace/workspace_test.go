package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
