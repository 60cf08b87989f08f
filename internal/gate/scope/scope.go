package scope

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Match reports whether rel, a slash-separated path relative to the
// repository root, is inside the scope patterns: a pattern matches the
// path itself or, written as a directory ("docs/" or "docs/**"), anything
// under it. "**" as a whole element matches any number of elements
// (none included); other elements are path.Match patterns. No patterns at
// all is unrestricted.
func Match(patterns []string, rel string) bool {
	if len(patterns) == 0 {
		return true
	}
	parts := strings.Split(rel, "/")
	for _, p := range patterns {
		dir := strings.HasSuffix(p, "/")
		ps := strings.Split(strings.TrimSuffix(p, "/"), "/")
		if dir {
			ps = append(ps, "**")
		}
		if match(ps, parts) {
			return true
		}
	}
	return false
}

func match(ps, parts []string) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if match(ps[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, err := path.Match(ps[0], parts[0]); err != nil || !ok {
			return false
		}
		ps, parts = ps[1:], parts[1:]
	}
	return len(parts) == 0
}

// Resolve returns the repository-relative, slash-separated path that a
// write to p would change: p is taken relative to cwd (the repository root
// when cwd is ""), "." and ".." are resolved, and so is every symbolic link
// on the way, in the part of the path that exists (a link to a file writes
// its target). inside is false when the write lands outside root.
func Resolve(root, cwd, p string) (rel string, inside bool, err error) {
	if p == "" {
		return "", false, errors.New("empty path")
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", false, fmt.Errorf("repository root %s: %w", root, err)
	}
	if cwd == "" {
		cwd = root
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	real, err := resolveExisting(filepath.Clean(p))
	if err != nil {
		return "", false, err
	}
	r, err := filepath.Rel(realRoot, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return filepath.ToSlash(real), false, nil
	}
	return filepath.ToSlash(r), true, nil
}

// maxLinks bounds the links followed in one path (a loop ends there).
const maxLinks = 40

// resolveExisting resolves the symbolic links of the longest part of p
// that exists, and appends the rest. A link whose target does not exist
// (yet) is followed too: a write through it creates its target.
func resolveExisting(p string) (string, error) { return resolveFrom(p, 0) }

func resolveFrom(p string, links int) (string, error) {
	rest := ""
	for cur := p; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			// a dangling link: the write lands where it points
			if links >= maxLinks {
				return "", fmt.Errorf("%s: too many links", p)
			}
			target, rerr := os.Readlink(cur)
			if rerr != nil {
				return "", rerr
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return resolveFrom(filepath.Join(filepath.Clean(target), rest), links+1)
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, os.ErrNotExist) {
			// a component that is not a directory, a loop: judge the path as written
			var pe *fs.PathError
			if !errors.As(err, &pe) {
				return "", err
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// Writes reports whether a Claude Code tool writes files.
func Writes(tool string) bool {
	switch tool {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		return true
	}
	return false
}

// Payload is what Claude Code gives a PreToolUse hook on stdin (the parts
// scope check reads).
type Payload struct {
	HookEventName string `json:"hook_event_name"`
	ToolName      string `json:"tool_name"`
	CWD           string `json:"cwd"`
	ToolInput     struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	} `json:"tool_input"`
}

// MaxPayload bounds the payload read, in bytes: a Write carries the whole
// file's content.
const MaxPayload = 64 << 20

// ParsePayload reads a PreToolUse payload. It returns the tool and the
// path it writes ("" for a tool that writes no file).
func ParsePayload(data []byte) (Payload, string, error) {
	// JSON v2: keys match exactly (tool_input's file_path, not a File_Path
	// beside it) and a key given twice is an error, so the path judged is
	// the one the tool writes
	var p Payload
	if err := json.Unmarshal(data, &p, jsontext.AllowInvalidUTF8(true)); err != nil {
		return Payload{}, "", fmt.Errorf("hook payload: %w", err)
	}
	if p.ToolName == "" {
		return Payload{}, "", errors.New("hook payload: no tool_name: is this a PreToolUse hook?")
	}
	if !Writes(p.ToolName) {
		return p, "", nil
	}
	target := p.ToolInput.FilePath
	if p.ToolName == "NotebookEdit" && p.ToolInput.NotebookPath != "" {
		target = p.ToolInput.NotebookPath
	}
	if target == "" {
		return p, "", fmt.Errorf("hook payload: %s with no file_path", p.ToolName)
	}
	return p, target, nil
}

// HookDeny is the JSON a PreToolUse hook prints on stdout (exit 0) to
// refuse the tool call; Claude Code shows the reason to the model.
func HookDeny(reason string) ([]byte, error) {
	out := map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": reason,
	}}
	b, err := json.Marshal(out, json.Deterministic(true)) // keys sorted, as the docs show them
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
