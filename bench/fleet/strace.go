//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// traced are the system calls that create, replace or remove a file. The
// ones marked ? may not exist on every architecture.
const traced = "openat,?open,?creat,?rename,?renameat,?renameat2,?link,linkat,?unlink,unlinkat"

// fileTrace is what one ask writes.
type fileTrace struct {
	Traced bool        `json:"traced"`
	Note   string      `json:"note,omitempty"` // why not, or how
	Exit   int         `json:"exit_code"`
	Writes []fileWrite `json:"writes,omitempty"`
}

// fileWrite is one path under .agentx/ and what the ask did to it, in the
// order it first did each.
type fileWrite struct {
	Path string   `json:"path"` // relative to the workspace; random temp suffixes are *
	Ops  []string `json:"ops"`  // create, create-if-missing, append, write, rename-from, rename-to, link-from, link-to, unlink; "×N" when repeated
}

// files asks twice on a fresh workspace and traces the second ask (the
// first creates the ledger, the index and the status file).
func (b *bench) files(ctx context.Context) (*fileTrace, error) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		return &fileTrace{Note: "strace is not installed: install it (apt-get install strace) to list the files an ask writes"}, nil
	}
	root := filepath.Join(b.tmp, "files")
	if err := b.workspace(ctx, root); err != nil {
		return nil, err
	}
	if _, err := b.r.must(ctx, job{argv: b.ask(1, "first"), root: root, dir: root}); err != nil {
		return nil, err
	}
	out := filepath.Join(b.tmp, "strace.out")
	argv := append([]string{strace, "-f", "-qq", "-e", "trace=" + traced, "-o", out}, b.ask(1, "second")...)
	p := b.r.run(ctx, job{argv: argv, root: root, dir: root})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var calls []sysCall
	if f, err := os.Open(out); err == nil {
		calls, err = parseStrace(f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	if len(calls) == 0 { // ptrace refused, say, as in some containers
		return &fileTrace{Exit: p.Exit, Note: fmt.Sprintf("strace recorded nothing (exit %d): %s", p.Exit, p.Stderr)}, nil
	}
	return &fileTrace{Traced: true, Exit: p.Exit, Note: "the second ask on an issue, traced with strace -f: opened for writing, created, renamed, linked, unlinked", Writes: writesUnder(calls, root)}, nil
}

// sysCall is one system call strace reported.
type sysCall struct {
	Name string
	Args []string // as printed; strings still quoted
	OK   bool     // it did not return an error
}

// parseStrace reads strace -f -o output: "PID name(args) = result" lines,
// joining calls that strace split into "<unfinished ...>" and
// "<... name resumed>" halves, and skipping signals and exits.
func parseStrace(r io.Reader) ([]sysCall, error) {
	var out []sysCall
	pending := map[string]string{} // pid → the first half of a call
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		pid, rest := "", strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(rest, ' '); i > 0 && isDigits(rest[:i]) {
			pid, rest = rest[:i], strings.TrimSpace(rest[i+1:])
		}
		if head, ok := strings.CutSuffix(rest, "<unfinished ...>"); ok {
			pending[pid] = strings.TrimSpace(head)
			continue
		}
		if strings.HasPrefix(rest, "<...") {
			i := strings.Index(rest, "resumed>")
			head, ok := pending[pid]
			if i < 0 || !ok {
				continue
			}
			delete(pending, pid)
			rest = head + rest[i+len("resumed>"):]
		}
		if c, ok := parseCall(rest); ok {
			out = append(out, c)
		}
	}
	return out, sc.Err()
}

func isDigits(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

var callRe = regexp.MustCompile(`^([a-z0-9_]+)\((.*)\)\s+=\s+(-?\d+|\?)`)

// parseCall parses "name(args) = result"; signals, exits and anything else
// are not calls.
func parseCall(s string) (sysCall, bool) {
	m := callRe.FindStringSubmatch(s)
	if m == nil {
		return sysCall{}, false
	}
	return sysCall{Name: m[1], Args: splitArgs(m[2]), OK: m[3] != "?" && !strings.HasPrefix(m[3], "-")}, true
}

// splitArgs splits strace's argument list at the commas that are outside
// strings, braces and brackets.
func splitArgs(s string) []string {
	var args []string
	depth, inStr, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[' || c == '(':
			depth++
		case c == '}' || c == ']' || c == ')':
			depth--
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" || len(args) > 0 {
		args = append(args, rest)
	}
	return args
}

// unquote is a string argument's value, or "" when it is not a string.
func unquote(arg string) string {
	if !strings.HasPrefix(arg, `"`) {
		return ""
	}
	arg = strings.TrimSuffix(arg, "...") // a string strace cut short
	if s, err := strconv.Unquote(arg); err == nil {
		return s
	}
	return strings.Trim(arg, `"`)
}

// pathOps are the paths a call changed and what it did to each.
func pathOps(c sysCall) (paths, ops []string) {
	arg := func(i int) string {
		if i < len(c.Args) {
			return unquote(c.Args[i])
		}
		return ""
	}
	two := func(from, to int, verb string) ([]string, []string) {
		return []string{arg(from), arg(to)}, []string{verb + "-from", verb + "-to"}
	}
	switch c.Name {
	case "openat", "open":
		path, flags := arg(1), ""
		if len(c.Args) > 2 {
			flags = c.Args[2]
		}
		if c.Name == "open" {
			path, flags = arg(0), ""
			if len(c.Args) > 1 {
				flags = c.Args[1]
			}
		}
		switch {
		case strings.Contains(flags, "O_EXCL"):
			return []string{path}, []string{"create"} // new, or the call fails
		case strings.Contains(flags, "O_APPEND"):
			return []string{path}, []string{"append"}
		case strings.Contains(flags, "O_CREAT"):
			return []string{path}, []string{"create-if-missing"}
		case strings.Contains(flags, "O_WRONLY"), strings.Contains(flags, "O_RDWR"):
			return []string{path}, []string{"write"}
		}
	case "creat":
		return []string{arg(0)}, []string{"create"}
	case "rename", "link":
		return two(0, 1, c.Name)
	case "renameat", "renameat2":
		return two(1, 3, "rename")
	case "linkat":
		return two(1, 3, "link")
	case "unlink":
		return []string{arg(0)}, []string{"unlink"}
	case "unlinkat":
		return []string{arg(1)}, []string{"unlink"}
	}
	return nil, nil
}

// tempSuffix is the random part of a temporary file's name.
var tempSuffix = regexp.MustCompile(`(\.tmp-)[0-9]+$`)

// writesUnder lists what the successful calls did to paths under root's
// .agentx directory, by path in the order first touched, with each path
// relative to root and its random temp suffix shown as *.
func writesUnder(calls []sysCall, root string) []fileWrite {
	var out []fileWrite
	at := map[string]int{}
	counts := map[string]map[string]int{}
	for _, c := range calls {
		if !c.OK {
			continue
		}
		paths, ops := pathOps(c)
		for i, p := range paths {
			if p == "" {
				continue
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(root, p) // relative to its working directory, the workspace
			}
			rel, err := filepath.Rel(root, p)
			if err != nil || (rel != ".agentx" && !strings.HasPrefix(rel, ".agentx"+string(filepath.Separator))) {
				continue
			}
			rel = tempSuffix.ReplaceAllString(filepath.ToSlash(rel), "${1}*")
			n, ok := at[rel]
			if !ok {
				n = len(out)
				at[rel] = n
				counts[rel] = map[string]int{}
				out = append(out, fileWrite{Path: rel})
			}
			if counts[rel][ops[i]] == 0 {
				out[n].Ops = append(out[n].Ops, ops[i])
			}
			counts[rel][ops[i]]++
		}
	}
	for i, w := range out {
		for j, op := range w.Ops {
			if k := counts[w.Path][op]; k > 1 {
				out[i].Ops[j] = fmt.Sprintf("%s×%d", op, k)
			}
		}
	}
	return out
}
