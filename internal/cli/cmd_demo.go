package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// demoStart is the demo's clock: fixed, so every run reads the same, and
// moved forward where the story needs time to pass.
var demoStart = time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)

// demoOptions are `agentx demo`'s flags.
type demoOptions struct {
	dir  string
	keep bool
}

func newDemoCmd(a *App) *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo [--dir D] [--keep]",
		Short: "Run a complete, real scenario in a fresh workspace and narrate it",
		Long: `Run the whole product on a throw-away workspace: real ledgers and locks,
responders run as real processes (agentx itself plays the architect), and every
step through the same commands you would type. It shows a question answered by
a responder with a follow-up, an asynchronous answer that unblocks an issue, a
deadlock the monitor breaks, a question that runs out of rounds and is settled
by a human, and a stale question that is retried and escalated.

The workspace is a temp dir, removed at the end unless --keep or --dir is
given; --dir never names a directory that already holds a workspace (.agentx/):
the demo writes its own config, workflows and issues, and is refused there.
Ctrl-C stops it after the command that is running, with a summary (exit 130);
so does a reader that goes away (agentx demo | head), quietly. With --json the
events of the whole run are printed instead.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().StringVar(&o.dir, "dir", "", "run in this new or empty directory (kept) instead of a temp dir")
	cmd.Flags().BoolVar(&o.keep, "keep", false, "keep the temp workspace")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *demoOptions) run(ctx context.Context, a *App) error {
	d, err := newDemo(a, o.dir, o.keep)
	if err != nil {
		return err
	}
	defer d.cleanup()
	return d.run(ctx)
}

type demo struct {
	a       *App
	root    string
	trusted string // the hash of the commands the demo configured
	keep    bool
	now     time.Time
	out     *demoOut // narration; to io.Discard under --json
	exe     string
	bold    func(string) string
	dim     func(string) string
	cleanup func()
}

// demoOut is the demo's narration. The first write that fails (the reader
// of a pipe went away) ends the demo: stop cancels its context.
type demoOut struct {
	w    io.Writer
	err  error
	stop func()
}

func (o *demoOut) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
		o.stop()
	}
	return n, err
}

func newDemo(a *App, dir string, keep bool) (*demo, error) {
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, workspace.Dir)); err == nil {
			return nil, &usageError{Err: fmt.Errorf("demo --dir %s: it already holds an agentx workspace (%s/); the demo writes its own config, workflows and issues, so it never runs in one: give a new or empty directory, or no --dir", dir, workspace.Dir)}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("demo: find the agentx binary: %w", err)
	}
	d := &demo{a: a, keep: keep || dir != "", now: demoStart, out: &demoOut{w: a.stdout, stop: func() {}}, exe: exe,
		bold: a.paint(boldAttr), dim: a.paint(faintAttr), cleanup: func() {}}
	if a.json {
		d.out.w = io.Discard
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "agentx-demo-"); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		if !d.keep {
			d.cleanup = func() { _ = os.RemoveAll(dir) }
		}
	}
	if d.root, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	return d, nil
}

// setup writes the workspace: the default workflows, and a config in which
// agentx itself, in its hidden demo-responder mode, answers as the architect.
func (d *demo) setup() error {
	if err := os.MkdirAll(d.root, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if _, err := workspace.Init(d.root, workflow.DefaultFiles(), true); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`
# added by agentx demo: agentx itself plays the architect, and stands in
# for the notify command that would page a person
[agents.architect]
command = [%q, "demo-responder", "architect"]
timeout = "30s"

[notify]
command = [%q, "demo-responder", "notify"]

# a scripted demo: its person's actions are not confirmed at the terminal
[humans]
confirm = false
`, d.exe, d.exe)
	platform := []byte(`# added by agentx demo: a workflow where designer and engineer work together
[workflow]
name = "platform"
description = "Design and build together: UX designer and engineer may ask each other"

[[steps]]
id = "design"
agent = "ux-designer"
can_clarify = ["engineer", "product-manager"]

[[steps]]
id = "build"
agent = "engineer"
needs = ["design"]
can_clarify = ["ux-designer", "architect"]
`)
	if err := atomicfile.Write(filepath.Join(d.root, workspace.Dir, "workflows", "platform.toml"), platform, 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	f, err := atomicfile.OpenFile(filepath.Join(d.root, workspace.Dir, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer f.Close()
	if _, err = f.WriteString(cfg); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	// the demo trusts the commands it wrote itself, for its own runs only
	// (AGENTX_TRUST in their environment): nothing is recorded for its
	// throwaway workspace in the user's configuration
	rules, err := workflow.Load(filepath.Join(d.root, workspace.Dir))
	if err != nil {
		return err
	}
	cmds, err := trust.Commands(rules, d.root)
	if err != nil {
		return err
	}
	d.trusted = trust.Hash(cmds)
	return nil
}

// say narrates a step, unless the demo has been stopped.
func (d *demo) say(ctx context.Context, format string, args ...any) {
	if ctx.Err() == nil {
		fmt.Fprintf(d.out, "\n%s\n", d.bold(fmt.Sprintf(format, args...)))
	}
}

// agentx runs one command in-process, exactly as typed, in the demo's
// workspace and at the demo's time, and shows it with its output.
func (d *demo) agentx(ctx context.Context, args ...string) (string, int) {
	return d.exec(ctx, true, args)
}

// brief runs a command like agentx but shows only the command line.
func (d *demo) brief(ctx context.Context, args ...string) (string, int) {
	return d.exec(ctx, false, args)
}

func (d *demo) exec(ctx context.Context, show bool, args []string) (string, int) {
	if ctx.Err() != nil {
		return "", ExitInterrupted.N // stopped: nothing more runs
	}
	var out, errb bytes.Buffer
	// AGENTX_AGENT unset: each command names who acts, as a person would.
	env := map[string]string{"AGENTX_ROOT": d.root, "AGENTX_NOW": d.now.Format(time.RFC3339), "AGENTX_AGENT": "", trust.EnvTrust: d.trusted}
	sub := &App{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, isTTY: d.a.isTTY,
		globalFlags: globalFlags{noColor: d.a.noColor}, getenv: func(k string) string {
			if v, ok := env[k]; ok {
				return v
			}
			return d.a.getenv(k)
		}}
	code := run(ctx, sub, args)
	fmt.Fprintf(d.out, "%s\n", d.dim("$ agentx "+shellJoin(args)))
	if show || code != 0 {
		fmt.Fprint(d.out, indentBlock(out.String()+errb.String()))
	}
	if code != 0 {
		fmt.Fprintf(d.out, "  %s\n", d.dim(fmt.Sprintf("(exit %d)", code)))
	}
	return out.String(), code
}

func indentBlock(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"?$*;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// steps are the demo's story, one function each, and the closing summary;
// ctx ends the run early.
func (d *demo) steps() []func(ctx context.Context) {
	return []func(ctx context.Context){
		func(ctx context.Context) {
			d.say(ctx, "1. The engineer asks the architect a blocking question; the architect's responder answers.")
			d.agentx(ctx, "clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect",
				"--topic", "Database adapter", "--question", "ADR-42 says PostgreSQL but local dev uses SQLite. Dual adapter or migrate?")
			d.now = d.now.Add(2 * time.Minute)
			d.say(ctx, "   A follow-up round, answered the same way; then the engineer resolves it.")
			d.agentx(ctx, "clarify", "followup", "CLR-42-001", "--from", "engineer", "--body", "Where does connection pooling config live?", "--format", "markdown")
			d.now = d.now.Add(3 * time.Minute)
			d.brief(ctx, "clarify", "resolve", "CLR-42-001", "--from", "engineer", "--body", "Proceeding with the repository pattern and per-environment pooling.")
		},
		func(ctx context.Context) {
			d.say(ctx, "2. The engineer asks the product manager, who has no responder: the question waits.")
			d.agentx(ctx, "clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "product-manager",
				"--topic", "Export format", "--question", "CSV, JSON or both for the first release?")
			d.agentx(ctx, "ready", "--issue", "42")
			d.now = d.now.Add(20 * time.Minute)
			d.say(ctx, "   Twenty minutes later the product manager answers; the issue is ready again.")
			d.brief(ctx, "clarify", "answer", "CLR-42-002", "--from", "product-manager", "--body", "JSON only; CSV next quarter.")
			d.agentx(ctx, "ready", "--issue", "42")
		},
		func(ctx context.Context) {
			d.say(ctx, "3. On issue 43 the UX designer and the engineer each block on a question to the other: a deadlock.")
			d.say(ctx, "   The monitor, run by every command, finds the cycle and escalates the less upstream agent's question.")
			d.agentx(ctx, "clarify", "ask", "--workflow", "platform", "--issue", "43", "--from", "ux-designer", "--to", "engineer",
				"--topic", "Offline mode", "--question", "Can the client cache the last 7 days of data offline?")
			d.agentx(ctx, "clarify", "ask", "--workflow", "platform", "--issue", "43", "--from", "engineer", "--to", "ux-designer",
				"--topic", "Offline mode", "--question", "Which screens must work offline?")
			d.agentx(ctx, "clarify", "list", "--issue", "43", "--all")
			d.say(ctx, "   The UX designer's question goes on; the engineer answers it, and a human settles the other.")
			d.brief(ctx, "clarify", "answer", "CLR-43-001", "--from", "engineer", "--body", "Yes: 7 days fits in 50 MB on the devices we support.")
			d.brief(ctx, "clarify", "resolve", "CLR-43-002", "--from", "human", "--as", "alex@example.com", "--body", "decision: feed and profile screens only")
			d.agentx(ctx, "ready", "--issue", "43")
		},
		func(ctx context.Context) {
			d.say(ctx, "4. Architect and product manager go three rounds on tenancy without agreeing: escalated to a human.")
			d.agentx(ctx, "clarify", "ask", "--issue", "44", "--from", "architect", "--to", "product-manager",
				"--topic", "Tenancy", "--question", "Single or multi tenant for v1?")
			for _, r := range []struct{ answer, followup string }{
				{"Single tenant.", "Enterprise pilots need isolation. Multi?"},
				{"Single; isolation later.", "Retrofitting tenancy is expensive. Multi now?"},
				{"Single.", "I propose schema-per-tenant from day one."},
			} {
				d.now = d.now.Add(5 * time.Minute)
				d.brief(ctx, "clarify", "answer", "CLR-44-001", "--from", "product-manager", "--body", r.answer)
				d.brief(ctx, "clarify", "followup", "CLR-44-001", "--from", "architect", "--body", r.followup)
			}
			d.agentx(ctx, "clarify", "show", "CLR-44-001")
			d.agentx(ctx, "ready", "--issue", "44")
			d.say(ctx, "   A human decides.")
			d.brief(ctx, "clarify", "resolve", "CLR-44-001", "--from", "human", "--as", "alex@example.com", "--body", "decision: schema-per-tenant, behind a flag")
			d.agentx(ctx, "ready", "--issue", "44")
		},
		func(ctx context.Context) {
			d.say(ctx, "5. The engineer asks a person a blocking question on issue 45, and nobody answers.")
			d.agentx(ctx, "clarify", "ask", "--issue", "45", "--from", "engineer", "--to", "human",
				"--topic", "Launch date", "--question", "Can we launch on Monday, or do we wait for the security review?")
			d.now = d.now.Add(25 * time.Hour)
			d.say(ctx, "   A day passes (the demo moves its clock): past the human SLA it is stale, and the person is notified again.")
			d.agentx(ctx, "monitor")
			d.now = d.now.Add(25 * time.Hour)
			d.say(ctx, "   Another day without an answer: escalated, so it cannot be forgotten.")
			d.agentx(ctx, "monitor")
			d.agentx(ctx, "ready", "--issue", "45")
		},
		func(ctx context.Context) { // the closing summary
			d.say(ctx, "Where things stand.")
			d.agentx(ctx, "state")
			d.agentx(ctx, "ready")
			d.agentx(ctx, "clarify", "stats")
		},
	}
}

func (d *demo) run(ctx context.Context) error {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.out.stop = cancel
	if err := d.setup(); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "%s\n", d.bold("agentx demo: agents asking each other, for real, in "+d.root))

	steps := d.steps()
	for i, step := range steps {
		step(ctx)
		if ctx.Err() != nil {
			return d.stopped(i+1, len(steps)-1, start)
		}
	}

	if d.a.json {
		res, err := router.EventLog{Path: filepath.Join(d.root, workspace.Dir, workspace.StateDir, router.EventsFile)}.Read(router.EventFilter{})
		if err != nil {
			return err
		}
		return d.a.emit(map[string]any{"workspace": d.root, "kept": d.keep, "events": res.Events}, func() {})
	}
	fmt.Fprintf(d.out, "\n%s in %.1fs.\n", d.bold("Done"), time.Since(start).Seconds())
	d.where()
	fmt.Fprintf(d.out, "Next: run `agentx init` in your repository, then read the README's \"Plugging in an agent\".\n")
	return nil
}

// where says whether the workspace is kept, and where.
func (d *demo) where() {
	if d.keep {
		fmt.Fprintf(d.out, "The workspace is kept: %s\n  ledgers   %s\n  events    %s\n  try       agentx --root %s clarify show --issue 44\n",
			d.root, filepath.Join(d.root, ".agentx/state/clarifications/"), filepath.Join(d.root, ".agentx/state/events.jsonl"), d.root)
	} else {
		fmt.Fprintf(d.out, "The workspace was a temp dir and is gone; keep it with --keep, or choose it with --dir.\n")
	}
}

// stopped ends a run cut short in step n of total (n > total: in the closing
// summary): by Ctrl-C, with a summary of where (exit 130); by output nobody
// reads any more (a broken pipe), quietly (exit 130); or by output that
// failed otherwise.
func (d *demo) stopped(n, total int, start time.Time) error {
	if d.out.err != nil {
		if errors.Is(d.out.err, syscall.EPIPE) {
			return &codedError{Code: ExitInterrupted, Msg: "demo: the output was closed", Quiet: true}
		}
		return fmt.Errorf("demo: write the narration: %w", d.out.err)
	}
	var where string
	switch {
	case n > total:
		where = fmt.Sprintf("in the closing summary (steps 1-%d complete)", total)
	case n == 1:
		where = fmt.Sprintf("in step 1 of %d (no step complete)", total)
	case n == 2:
		where = fmt.Sprintf("in step 2 of %d (step 1 complete)", total)
	default:
		where = fmt.Sprintf("in step %d of %d (steps 1-%d complete)", n, total, n-1)
	}
	fmt.Fprintf(d.out, "\n%s after %.1fs.\n", d.bold("Interrupted "+where), time.Since(start).Seconds())
	d.where()
	return &interruptedError{err: context.Canceled}
}

// newDemoResponderCmd is the hidden responder the demo configures: it reads
// the prompt on stdin and answers as a scripted agent would.
// demoResponderOptions are `agentx demo-responder`'s argument: the role
// it plays.
type demoResponderOptions struct {
	role string
}

func newDemoResponderCmd(a *App) *cobra.Command {
	o := &demoResponderOptions{}
	return &cobra.Command{
		Use:    "demo-responder ROLE",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.role = args[0]
			return o.run(a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *demoResponderOptions) run(a *App) error {
	prompt, err := io.ReadAll(io.LimitReader(a.stdin, 1<<20))
	if err != nil {
		return err
	}
	if o.role == "notify" {
		return nil // a real notify command would page someone with the JSON it read
	}
	a.printf("%s\n", demoAnswer(o.role, string(prompt)))
	return nil
}

// demoAnswer is the scripted agents' knowledge: the first rule whose words
// appear in the current question answers it.
func demoAnswer(role, prompt string) string {
	q := prompt
	if i := strings.LastIndex(prompt, "Current question:"); i >= 0 {
		q = prompt[i:]
	}
	q = strings.ToLower(q)
	rules := []struct{ words, answer string }{
		{"pooling", "Pool size comes from per-environment config: 10 in dev, 50 in prod, read at start-up."},
		{"sqlite", "Repository pattern: one interface, SQLite in dev, PostgreSQL in staging and prod."},
		{"cache", "Cache at the service layer with a 5-minute TTL; never in the repository."},
	}
	for _, r := range rules {
		if strings.Contains(q, r.words) {
			return r.answer
		}
	}
	return fmt.Sprintf("As %s: keep it simple and consistent with the ADR; ask me again with specifics if that does not settle it.", role)
}
