package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/workflow"
)

// The snippet runner: every agentx command shown in README.md, docs/*.md,
// the config.toml that `agentx init` writes and the commands' --help
// examples is checked against the real command tree, and what can be run
// is run.
//
//   - Each command line is parsed as cobra would (the command exists, its
//     flags exist and take their values, the argument count fits, cobra's
//     required flags are there). A synopsis (`agentx ready [--issue N]`)
//     has its flags checked; a bare command name (`agentx clarify show` in
//     a table) must name a command.
//   - Each shell snippet (a sh block, a YAML `run:` line, a hook's
//     "command" in JSON) runs through sh, as written, in a scratch
//     workspace of its own: empty if the snippet runs `agentx init`, else
//     seeded (snippetSeed). Every agentx command in it must exit 0 or a
//     code the snippet itself mentions ("exit 9", a `case` label).
//   - Every other concrete command line (inline, in a comment, in shown
//     output) runs in-process in a seeded scratch workspace, placeholders
//     (ID, N, A, ...) filled in; it must not fail for its syntax or its
//     setup (exit 1, 2, 5, 7 or 10), though the seed's state may refuse it.
//
// What must not run is in snippetAllow with the reason.

// snippetAllow: snippets (matched by a substring) that are not run, and
// why; parse false: not parsed either.
var snippetAllow = []struct {
	text, why string
	parse     bool
}{
	{"go run ./cmd/agentx demo", "the Set up block builds the project and runs its whole test suite (go run, go test -race ./...)", true},
	{"claude mcp add", "needs Claude Code installed", true},
	{"agentx mcp", "long-running: the MCP server serves stdin until it closes", true},
	{"agentx slack listen", "long-running: the Socket Mode listener runs until interrupted, and needs a Slack app", true},
	{"agentx watch", "long-running: it follows the workspace until interrupted (watch.txtar runs --once)", true},
	{"agentx desk", "long-running: it serves the page until interrupted (the browser tests in internal/frontends/desk run it)", true},
	{"agentx clarify ...", "stands for every clarify subcommand, not a command", false},
	{"agentx remote enable", "needs a git repository whose remote answers (remote_wait.txtar runs it)", true},
	{"git fetch origin 'refs/agentx/*", "needs a git remote holding the refs", true},
	{"agentx remote log", "needs a [remote] whose git remote answers (remote_inbox.txtar runs it)", true},
	{"go install github.com/agentx-cli/agentx", "downloads the module", true},
	{"--option 2 --body \"decision: schema per tenant\"", "needs a question asked with options and an escalation (option.txtar and escalation.txtar run these)", true},
}

// allowed says whether text may not be run (and then why), and whether
// it is still parsed.
func allowed(text string) (why string, ok, parse bool) {
	for _, a := range snippetAllow {
		if strings.Contains(text, a.text) {
			return a.why, true, a.parse
		}
	}
	return "", false, true
}

// snippetEnv is the environment snippets run with, and the values their
// shell variables take when parsed.
func snippetEnv(projectDir string) map[string]string {
	return map[string]string{"ISSUE": "42", "CLAUDE_PROJECT_DIR": projectDir}
}

// placeholders fill in the upper-case words a synopsis or a prose command
// uses, so it can run.
var placeholders = map[string]string{
	"ID": "CLR-42-001", "N": "42", "A": "engineer", "B": "architect", "NAME": "feature",
	"TEXT": "some text", "T": "Topic", "D": "1h", "R": "a reason", "Q": "A question?", "...": "some text",
	"CLR-N-NNN": "CLR-43-001",
}

// cmdLine is one agentx command as shown, with where.
type cmdLine struct {
	where string
	text  string // from "agentx" on, one line
	args  []string
	kind  string // "line", "synopsis", "example", or "shell" (inside a shell snippet)
}

// shellSnippet is a piece of shell a reader would paste.
type shellSnippet struct {
	where string
	text  string
}

// ghExpr is a GitHub Actions expression: ${{ env.X }} reads $X.
var ghExpr = regexp.MustCompile(`\$\{\{\s*env\.(\w+)\s*\}\}`)

// shellWords splits a shell line into commands: each is its words
// (quotes removed, $VAR expanded from env) up to an operator (| ; & ( ) < >,
// $( ) or a comment. Only what the docs use is understood.
func shellWords(line string, env map[string]string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	expand := func(s string, i int) (string, int) { // s[i] == '$'
		j := i + 1
		brace := j < len(s) && s[j] == '{'
		if brace {
			j++
		}
		k := j
		for k < len(s) && (s[k] == '_' || s[k] >= 'A' && s[k] <= 'Z' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= '0' && s[k] <= '9') {
			k++
		}
		if k == j {
			return "$", i + 1
		}
		name := s[j:k]
		if brace && k < len(s) && s[k] == '}' {
			k++
		}
		if v, ok := env[name]; ok {
			return v, k
		}
		return "CLR-42-001", k // a variable a script set: an id is what the docs put in one
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				end = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case c == '"':
			inWord = true
			i++
			for i < len(line) && line[i] != '"' {
				switch {
				case line[i] == '\\' && i+1 < len(line):
					w.WriteByte(line[i+1])
					i += 2
				case line[i] == '$' && !strings.HasPrefix(line[i:], "$("):
					v, n := expand(line, i)
					w.WriteString(v)
					i = n
				default:
					w.WriteByte(line[i])
					i++
				}
			}
			i++
		case c == '\\' && i+1 < len(line):
			w.WriteByte(line[i+1])
			inWord = true
			i += 2
		case c == '$' && strings.HasPrefix(line[i:], "$("):
			flushCmd()
			i += 2
		case c == '$':
			v, n := expand(line, i)
			w.WriteString(v)
			inWord = true
			i = n
		case c == '#' && !inWord:
			flushCmd()
			return cmds
		case strings.IndexByte("|;&()<>", c) >= 0:
			flushCmd()
			i++
		case c == ' ' || c == '\t':
			flushWord()
			i++
		default:
			// an assignment word ends where a command substitution starts
			w.WriteByte(c)
			inWord = true
			i++
		}
	}
	flushCmd()
	return cmds
}

// agentxArgs returns the agentx invocations among a line's commands: words
// after "agentx", after "go run ./cmd/agentx", or after "--" when a
// wrapper passes an agentx command line on (claude mcp add ... -- agentx
// mcp). A word ending in "=" (an assignment before $(...)) is skipped.
func agentxArgs(cmds [][]string) [][]string {
	var out [][]string
	for _, words := range cmds {
		for len(words) > 0 && strings.HasSuffix(words[0], "=") {
			words = words[1:]
		}
		switch {
		case len(words) == 0:
		case words[0] == "agentx":
			out = append(out, words[1:])
		case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/agentx":
			out = append(out, words[3:])
		default:
			if i := slices.Index(words, "--"); i >= 0 && i+1 < len(words) && words[i+1] == "agentx" {
				out = append(out, words[i+2:])
			}
		}
	}
	return out
}

// snippetCommands are the agentx invocations in a piece of shell.
func snippetCommands(text string, env map[string]string) [][]string {
	var out [][]string
	for _, l := range strings.Split(strings.ReplaceAll(ghExpr.ReplaceAllString(text, "$$$1"), "\\\n", " "), "\n") {
		out = append(out, agentxArgs(shellWords(strings.TrimSpace(l), env))...)
	}
	return out
}

var (
	fenceRE  = regexp.MustCompile("^\\s*```\\s*([a-z]*)")
	inlineRE = regexp.MustCompile("`(agentx [^`]*)`")
	jsonCmd  = regexp.MustCompile(`"command":\s*("(?:[^"\\]|\\.)*")`)
	runLine  = regexp.MustCompile(`^\s*(?:-\s+)?run:\s*(.*)$`)
)

// markdownSnippets extracts the shell snippets and the other command
// lines of one markdown file.
func markdownSnippets(t *testing.T, file string, env map[string]string) ([]shellSnippet, []cmdLine) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	rel, _ := filepath.Rel(repoRoot, file)
	lines := strings.Split(string(data), "\n")
	var snips []shellSnippet
	var cmds []cmdLine
	at := func(i int) string { return fmt.Sprintf("%s:%d", rel, i+1) }
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		lang, start := m[1], i
		var body []string
		for i++; i < len(lines) && !fenceRE.MatchString(lines[i]); i++ {
			body = append(body, lines[i])
		}
		block := strings.Join(body, "\n")
		switch lang {
		case "sh", "bash", "shell":
			snips = append(snips, shellSnippet{at(start), block})
		case "yaml":
			for k, l := range body {
				if rm := runLine.FindStringSubmatch(l); rm != nil {
					snips = append(snips, shellSnippet{at(start + 1 + k), rm[1]})
				}
			}
		case "json":
			for k, l := range body {
				for _, jm := range jsonCmd.FindAllStringSubmatch(l, -1) {
					var s string
					require.NoError(t, json.Unmarshal([]byte(jm[1]), &s))
					if strings.HasPrefix(s, "agentx ") {
						snips = append(snips, shellSnippet{at(start + 1 + k), s})
					}
				}
			}
		default: // shown output, listings: its command lines are parsed and run
			for _, args := range snippetCommands(block, env) {
				cmds = append(cmds, cmdLine{where: at(start), text: "agentx " + strings.Join(args, " "), args: args, kind: "line"})
			}
		}
	}
	return snips, append(cmds, inlineLines(t, string(data), rel, env)...)
}

// inlineLines are the commands in inline code spans (in prose, a table, a
// comment): a synopsis when it has [optional] parts or | alternatives.
func inlineLines(t *testing.T, text, where string, env map[string]string) []cmdLine {
	t.Helper()
	var out []cmdLine
	for _, m := range inlineRE.FindAllStringSubmatchIndex(text, -1) {
		span := strings.Join(strings.Fields(strings.ReplaceAll(text[m[2]:m[3]], `\|`, "|")), " ")
		c := cmdLine{where: fmt.Sprintf("%s:%d", where, strings.Count(text[:m[0]], "\n")+1), text: span, kind: "line"}
		if strings.ContainsAny(span, "[|") {
			c.kind = "synopsis"
		} else {
			cmds := agentxArgs(shellWords(span, env))
			if len(cmds) != 1 {
				t.Errorf("%s: cannot read %q as one command", c.where, span)
				continue
			}
			c.args = cmds[0]
		}
		out = append(out, c)
	}
	return out
}

// templateLines are the commands the init template's comments show: a
// comment that is a command, a command after a colon, and inline spans.
func templateLines(t *testing.T, env map[string]string) []cmdLine {
	t.Helper()
	// "#   agentx ..." (an example, indented) or "...: agentx ..."
	afterColon := regexp.MustCompile(`^\s{2,}(agentx\s.*)$|:\s+(agentx\s.*)$`)
	var out []cmdLine
	files := workflow.DefaultFiles()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		where := "init template " + name
		text := string(files[name])
		for i, l := range strings.Split(text, "\n") {
			body, ok := strings.CutPrefix(strings.TrimSpace(l), "#")
			if !ok {
				continue
			}
			if m := afterColon.FindStringSubmatch(body); m != nil {
				for _, args := range agentxArgs(shellWords(m[1]+m[2], env)) {
					out = append(out, cmdLine{where: fmt.Sprintf("%s:%d", where, i+1), text: "agentx " + strings.Join(args, " "), args: args, kind: "line"})
				}
			}
		}
		out = append(out, inlineLines(t, text, where, env)...)
	}
	return out
}

// exampleLines are the commands of every command's --help examples.
func exampleLines(root *cobra.Command, env map[string]string) []cmdLine {
	var out []cmdLine
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		logical := strings.ReplaceAll(c.Example, "\\\n", " ")
		for _, l := range strings.Split(logical, "\n") {
			for _, args := range agentxArgs(shellWords(strings.TrimSpace(l), env)) {
				out = append(out, cmdLine{where: c.CommandPath() + " --help example", text: "agentx " + strings.Join(args, " "), args: args, kind: "example"})
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// treeRoot is the command tree with cobra's own help and completion
// commands, which it adds only when it executes.
func treeRoot() *cobra.Command {
	root := newRootCmd(&App{getenv: func(string) string { return "" }})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// checkSyntax parses args as cobra would run them, without running.
func checkSyntax(args []string) error {
	cmd, rest, err := treeRoot().Find(args)
	if err != nil {
		return err
	}
	if !cmd.Runnable() {
		return fmt.Errorf("%q is not a command that runs (give a subcommand)", cmd.CommandPath())
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return err
	}
	return cmd.ValidateRequiredFlags()
}

// checkName checks that words name a command.
func checkName(words []string) (bool, error) {
	root := treeRoot()
	cmd, rest, err := root.Find(words)
	if err != nil || len(rest) > 0 {
		return false, err
	}
	return cmd != root, nil
}

// checkSynopsis checks that the flags a synopsis names exist on its
// command, or for alternatives (hook start|finish) on one of them.
func checkSynopsis(text string) error {
	cmds := []*cobra.Command{treeRoot()}
	for _, w := range strings.Fields(strings.TrimPrefix(text, "agentx ")) {
		var next []*cobra.Command
		for _, c := range cmds {
			for _, alt := range strings.Split(w, "|") {
				if sub, _, err := c.Find([]string{alt}); err == nil && sub != c {
					next = append(next, sub)
				}
			}
		}
		if len(next) == 0 {
			break
		}
		cmds = next
	}
	for _, f := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(text, -1) {
		found := false
		for _, c := range cmds {
			c.InitDefaultHelpFlag()
			found = found || c.Flags().Lookup(f[1]) != nil || c.InheritedFlags().Lookup(f[1]) != nil
		}
		if !found {
			return fmt.Errorf("%s has no flag --%s", cmds[0].CommandPath(), f[1])
		}
	}
	return nil
}

// checkClaudeMCPAdd checks a `claude mcp add` line for Claude Code's
// --env trap: --env (-e) takes every following word as another KEY=VALUE,
// so a server name after it is swallowed; the name goes before --env.
func checkClaudeMCPAdd(words []string) error {
	inEnv := false
	for _, w := range words {
		switch {
		case w == "--":
			return nil
		case w == "--env" || w == "-e":
			inEnv = true
		case strings.HasPrefix(w, "-"):
			inEnv = false
		case inEnv && !strings.Contains(w, "="):
			return fmt.Errorf("%q after --env is read as another variable, not the server name: put the name before --env", w)
		}
	}
	return nil
}

// claudeLines are the `claude mcp add` commands in a piece of shell.
func claudeLines(text string, env map[string]string) [][]string {
	var out [][]string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n") {
		for _, words := range shellWords(strings.TrimSpace(l), env) {
			if len(words) > 3 && words[0] == "claude" && words[1] == "mcp" && words[2] == "add" {
				out = append(out, words[3:])
			}
		}
	}
	return out
}

// checkLine checks one command line's syntax, whatever its kind. A line
// that only names a command (`agentx hook start` in prose, a table of
// commands) is checked to name one, and is not one to run.
func checkLine(c cmdLine) (run bool, err error) {
	if c.kind == "synopsis" {
		return false, checkSynopsis(c.text)
	}
	if name, _ := checkName(c.args); name {
		return false, nil
	}
	return true, checkSyntax(fill(c.args))
}

// fill replaces placeholder words.
func fill(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if v, ok := placeholders[a]; ok {
			a = v
		}
		out[i] = a
	}
	return out
}

// snippetSeed makes a workspace as the docs' examples expect one: issue 42
// has CLR-42-001 (engineer -> architect, escalated, as the README's
// decision example needs) and CLR-42-002 (reviewer -> engineer, pending:
// the engineer's inbox has a question); issue 43 has CLR-43-001, resolved,
// a decision to reuse; the architect answers at once (a demo responder),
// so the README's ask --wait gets its answer.
func snippetSeed(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init"},
		{"clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect", "--topic", "Database adapter", "--question", "PostgreSQL or SQLite?"},
		{"clarify", "escalate", "CLR-42-001", "--reason", "needs a decision"},
		{"clarify", "ask", "--issue", "42", "--from", "reviewer", "--to", "engineer", "--topic", "Tests", "--question", "Why no test for the adapter?"},
		{"clarify", "ask", "--issue", "43", "--from", "engineer", "--to", "architect", "--topic", "Database adapter", "--question", "PostgreSQL or SQLite here too?"},
		{"clarify", "answer", "CLR-43-001", "--from", "architect", "--body", "PostgreSQL."},
		{"clarify", "resolve", "CLR-43-001", "--from", "engineer"},
	} {
		r := runCmd(t, dir, nil, "", args...)
		require.Equal(t, 0, r.code, "seed %v: %s", args, r.stderr)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	// the snippets' person is scripted: no terminal to confirm at
	appendConfig(t, dir, fmt.Sprintf("\n[agents.architect]\ncommand = [%q, \"demo-responder\", \"architect\"]\n\n[humans]\nconfirm = false\n", exe))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "services", "api"), 0o755))
	return dir
}

// scratch returns a fresh copy of the seed, or an empty directory for a
// snippet that makes its own workspace (agentx init).
func scratch(t *testing.T, seed, text string) string {
	t.Helper()
	dir := t.TempDir()
	if strings.Contains(text, "agentx init") {
		for _, m := range regexp.MustCompile(`(?m)^\s*cd\s+([\w./-]+)`).FindAllStringSubmatch(text, -1) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, m[1]), 0o755))
		}
		return dir
	}
	require.NoError(t, os.CopyFS(dir, os.DirFS(seed)))
	return dir
}

// exitsAllowed are the exit codes a snippet says it may end with.
func exitsAllowed(text string) []int {
	codes := []int{0}
	for _, re := range []*regexp.Regexp{regexp.MustCompile(`exit (\d+)`), regexp.MustCompile(`(?m)^\s*(\d+)\)`)} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			n, _ := strconv.Atoi(m[1])
			codes = append(codes, n)
		}
	}
	return codes
}

// agentxLogger wraps agentx in a snippet so that each call's exit status
// and arguments are logged to $AGENTX_SNIPPET_LOG.
const agentxLogger = `agentx() { command agentx "$@"; s=$?; printf '%s\t%s\n' "$s" "$*" >> "$AGENTX_SNIPPET_LOG"; return $s; }
`

// runShell runs a shell snippet through sh in dir and checks the exit
// status of every agentx command it ran.
func runShell(t *testing.T, sh, dir string, s shellSnippet) {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "calls")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sh, "-c", agentxLogger+s.text)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTX_SNIPPET_LOG="+logFile, "AGENTX_ROOT=", "AGENTX_AGENT=", "AGENTX_ISSUE=", "NO_COLOR=1", "HOME="+dir, "USER=snippet-runner")
	if h := commandsHash(dir); h != "" {
		// the seed's responder is the docs' example: trusted, as a person would
		cmd.Env = append(cmd.Env, trust.EnvTrust+"="+h)
	}
	for k, v := range snippetEnv(filepath.Join(dir, "services", "api")) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	status := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: run sh: %v", s.where, err)
	}
	ok := exitsAllowed(s.text)
	if !slices.Contains(ok, status) {
		t.Errorf("%s: the snippet exited %d (allowed: %v)\n%s\noutput:\n%s", s.where, status, ok, s.text, out)
	}
	calls, _ := os.ReadFile(logFile)
	if len(calls) == 0 {
		t.Errorf("%s: the snippet ran no agentx command\n%s\noutput:\n%s", s.where, s.text, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(calls)), "\n") {
		code, args, _ := strings.Cut(l, "\t")
		if n, _ := strconv.Atoi(code); !slices.Contains(ok, n) {
			t.Errorf("%s: agentx %s exited %s (allowed: %v)\noutput:\n%s", s.where, args, code, ok, out)
		}
	}
}

// refusedByState are the exit codes a command may get from the seed's
// state rather than from a mistake in the snippet.
var refusedByState = []int{0, 3, 4, 6, 8, 9}

// TestDocSnippets runs the snippet runner over the README, docs/*.md, the
// init template and the --help examples.
func TestDocSnippets(t *testing.T) {
	seed := snippetSeed(t)
	env := snippetEnv(filepath.Join(seed, "services", "api"))
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	files = append([]string{filepath.Join(repoRoot, "README.md")}, files...)

	var snips []shellSnippet
	var lines []cmdLine
	for _, f := range files {
		s, l := markdownSnippets(t, f, env)
		snips, lines = append(snips, s...), append(lines, l...)
	}
	lines = append(lines, templateLines(t, env)...)
	lines = append(lines, exampleLines(treeRoot(), env)...)
	for _, s := range snips {
		for _, args := range snippetCommands(s.text, env) {
			lines = append(lines, cmdLine{where: s.where, text: "agentx " + strings.Join(args, " "), args: args, kind: "shell"})
		}
	}
	require.NotEmpty(t, snips)
	require.Greater(t, len(lines), 50, "the docs show more commands than that: is the extraction broken?")
	t.Logf("%d shell snippets, %d command lines", len(snips), len(lines))

	runnable := map[string]bool{}
	t.Run("syntax", func(t *testing.T) {
		for _, s := range snips {
			for _, words := range claudeLines(s.text, env) {
				if err := checkClaudeMCPAdd(words); err != nil {
					t.Errorf("%s: claude mcp add %s: %v", s.where, strings.Join(words, " "), err)
				}
			}
		}
		for _, c := range lines {
			if why, _, parse := allowed(c.text); !parse {
				t.Logf("%s: %s: not parsed: %s", c.where, c.text, why)
				continue
			}
			run, err := checkLine(c)
			if err != nil {
				t.Errorf("%s: %s: %v", c.where, c.text, err)
			}
			if run && err == nil && c.kind == "line" {
				runnable[c.text] = true
			}
		}
	})

	t.Run("shell", func(t *testing.T) {
		sh, err := exec.LookPath("sh")
		if err != nil {
			t.Skip("no sh to run the shell snippets")
		}
		ran := 0
		for _, s := range snips {
			s.text = ghExpr.ReplaceAllString(s.text, "$$$1")
			if len(snippetCommands(s.text, env)) == 0 {
				continue // no agentx in it (a notify script)
			}
			if why, ok, _ := allowed(s.text); ok {
				t.Logf("%s: not run: %s", s.where, why)
				continue
			}
			runShell(t, sh, scratch(t, seed, s.text), s)
			ran++
		}
		t.Logf("ran %d shell snippets", ran)
	})

	t.Run("lines", func(t *testing.T) {
		ran := 0
		defer func() { t.Logf("ran %d command lines", ran) }()
		for _, c := range lines {
			if !runnable[c.text] {
				continue
			}
			delete(runnable, c.text) // once each
			if why, ok, _ := allowed(c.text); ok {
				t.Logf("%s: %s: not run: %s", c.where, c.text, why)
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			dir := scratch(t, seed, c.text)
			r := runCmdCtx(t, ctx, dir, map[string]string{"HOME": dir}, fill(c.args)...)
			cancel()
			ran++
			if !slices.Contains(refusedByState, r.code) {
				t.Errorf("%s: %s: exit %d\nstdout: %s\nstderr: %s", c.where, c.text, r.code, r.stdout, r.stderr)
			}
		}
	})
}

// TestSnippetCheckerCatchesMistakes: the checks fail on the mistakes docs
// make (the init template once showed the first of these).
func TestSnippetCheckerCatchesMistakes(t *testing.T) {
	env := snippetEnv("/tmp/project")
	tests := []struct {
		line string
		bad  bool
	}{
		{`agentx clarify answer CLR-42-001 --from architect "..."`, true},
		{`agentx clarify answer CLR-42-001 --from architect --body "..."`, false},
		{`agentx clarify ask --issue 42 --from engineer --to architect --question q`, true}, // no --topic
		{`agentx clarify ask --issue 42 --from engineer --to architect --topic t --question q`, false},
		{`agentx clarify list --bogus`, true},
		{`agentx frobnicate`, true},
		{`agentx workflow show`, false}, // a command's name
		{`agentx workflow show feature extra`, true},
		{`agentx inbox --root "$CLAUDE_PROJECT_DIR" --agent engineer --format claude-hook`, false},
		{`out=$(agentx clarify ask --issue "$ISSUE" --from engineer --to architect --topic T --question q --wait --timeout 5m)`, false},
		{`agentx clarify stats --since 7d --format markdown > week.md`, false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cmds := agentxArgs(shellWords(tt.line, env))
			require.Len(t, cmds, 1)
			_, err := checkLine(cmdLine{text: tt.line, args: cmds[0], kind: "line"})
			if tt.bad != (err != nil) {
				t.Fatalf("checkLine(%q) = %v, want an error: %v", tt.line, err, tt.bad)
			}
		})
	}
	for _, tt := range []struct {
		line string
		bad  bool
	}{
		{"claude mcp add --scope project --env AGENTX_AGENT=engineer agentx -- agentx mcp", true},
		{"claude mcp add agentx --scope project --env AGENTX_AGENT=engineer -- agentx mcp", false},
		{"claude mcp add agentx -e A=1 -e B=2 -- agentx mcp", false},
	} {
		words := claudeLines(tt.line, env)
		require.Len(t, words, 1)
		if err := checkClaudeMCPAdd(words[0]); tt.bad != (err != nil) {
			t.Errorf("checkClaudeMCPAdd(%q) = %v, want an error: %v", tt.line, err, tt.bad)
		}
	}
	for _, tt := range []struct {
		text string
		bad  bool
	}{
		{"agentx ready [--issue N]", false},
		{"agentx clarify show ID | --issue N", false},
		{"agentx demo [--dir D] [--keep] [--bogus]", true},
	} {
		if err := checkSynopsis(tt.text); tt.bad != (err != nil) {
			t.Errorf("checkSynopsis(%q) = %v, want an error: %v", tt.text, err, tt.bad)
		}
	}
}

// TestREADMEShellFlowIsTheStory: the shell flow the README shows (ask and
// wait, then record an assumption on the id) is, word for word, the one
// ask_wait_script.txtar runs, but for its one-second wait.
func TestREADMEShellFlowIsTheStory(t *testing.T) {
	snips, _ := markdownSnippets(t, filepath.Join(repoRoot, "README.md"), snippetEnv(""))
	var readme string
	for _, s := range snips {
		if strings.Contains(s.text, "clarify assume") {
			readme = s.text
		}
	}
	require.NotEmpty(t, readme, "the README shows no ask-then-assume snippet")
	ar, err := txtar.ParseFile(filepath.Join("testdata", "script", "ask_wait_script.txtar"))
	require.NoError(t, err)
	var story string
	for _, f := range ar.Files {
		if f.Name == "ask.sh" {
			story = string(f.Data)
		}
	}
	dedent := func(s string) string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "   ")
		}
		return strings.Join(lines, "\n")
	}
	require.Equal(t, dedent(readme), strings.Replace(dedent(story), "--timeout 1s", "--timeout 5m", 1))
}
