package brief

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
)

// MaxIssueText bounds an issue's text file, in bytes.
const MaxIssueText = ledger.MaxBodyLen + ledger.MaxTopicLen + 16

// Issue is an issue's text, as .agentx/issues/N.md keeps it: the title on
// its first line ("# Title"), a blank line, the body.
type Issue struct {
	Number int    `json:"issue"`
	Path   string `json:"path"` // relative to the repository root
	Title  string `json:"title,omitempty"`
	Body   string `json:"body,omitempty"`
}

// Text is the issue as its file holds it.
func (is Issue) Text() string {
	var b strings.Builder
	if is.Title != "" {
		b.WriteString("# " + is.Title + "\n")
		if is.Body != "" {
			b.WriteString("\n")
		}
	}
	if is.Body != "" {
		b.WriteString(strings.TrimRight(is.Body, "\n") + "\n")
	}
	return b.String()
}

// ParseIssue reads an issue's text: a first line "# Title" is its title,
// the rest (blank lines around it trimmed) its body.
func ParseIssue(n int, text string) Issue {
	is := Issue{Number: n, Path: IssuePath(n)}
	first, rest, _ := strings.Cut(text, "\n")
	if t, ok := strings.CutPrefix(strings.TrimSuffix(first, "\r"), "# "); ok {
		is.Title, text = strings.TrimSpace(t), rest
	}
	is.Body = strings.Trim(text, "\r\n")
	return is
}

// ReadIssue reads issue n's text under root, never through a symbolic
// link from root's .agentx directory on; ok is false when there is none.
func ReadIssue(root string, n int) (is Issue, ok bool, err error) {
	path := filepath.Join(root, filepath.FromSlash(IssuePath(n)))
	if err := atomicfile.CheckNoLinks(filepath.Join(root, ".agentx"), path); err != nil {
		return Issue{}, false, err
	}
	data, err := atomicfile.ReadAtMost(path, MaxIssueText)
	if errors.Is(err, fs.ErrNotExist) {
		return Issue{Number: n, Path: IssuePath(n)}, false, nil
	}
	if err != nil {
		return Issue{}, false, err
	}
	return ParseIssue(n, string(data)), true, nil
}

// Describe writes issue n's text under root: title and body as given, a
// part given empty kept as the file has it. The file is replaced whole
// (atomicfile: a reader sees the old text or the new), never through a
// symbolic link, nor one on the way from root's .agentx directory.
func Describe(root string, n int, title, body string) (Issue, error) {
	if n <= 0 {
		return Issue{}, &ledger.InputError{Field: "issue", Value: fmt.Sprint(n), Msg: "must be an issue number from 1"}
	}
	if title != "" {
		if err := ledger.ValidateText("title", title, ledger.MaxTopicLen); err != nil {
			return Issue{}, err
		}
		if strings.ContainsAny(title, "\r\n") {
			return Issue{}, &ledger.InputError{Field: "title", Value: title, Msg: "must be one line"}
		}
	}
	if body != "" {
		if err := ledger.ValidateText("body", body, ledger.MaxBodyLen); err != nil {
			return Issue{}, err
		}
	}
	is, _, err := ReadIssue(root, n)
	if err != nil {
		return Issue{}, err
	}
	if title != "" {
		is.Title = strings.TrimSpace(title)
	}
	if body != "" {
		is.Body = strings.Trim(body, "\r\n")
	}
	base := filepath.Join(root, ".agentx")
	if fi, err := os.Lstat(base); err != nil || !fi.IsDir() {
		return Issue{}, fmt.Errorf("%s is not a directory: run agentx init first", base)
	}
	path := filepath.Join(root, filepath.FromSlash(is.Path))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Issue{}, err
	}
	if err := atomicfile.CheckNoLinks(base, path); err != nil { // a link made meanwhile
		return Issue{}, err
	}
	if err := atomicfile.Write(path, []byte(is.Text()), 0o644); err != nil {
		return Issue{}, err
	}
	return is, nil
}
