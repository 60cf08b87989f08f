package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/doctor"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/internal/workspace"
)

// doctorMemory is the soft memory limit of agentx doctor: measured on
// 10,000 ledgers and a million-line event log, 78 MiB of resident memory
// for 7 % more CPU than without it (docs/performance.md).
const doctorMemory = 64 << 20

// doctorOptions are `agentx doctor`'s flags.
type doctorOptions struct {
	fix bool
}

func newDoctorCmd(a *App) *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor [--fix]",
		Short: "Check the workspace's state: ledgers, schema, locks, temp files, index, statuses, inbox marks, event log (--fix repairs)",
		Long: `Check every ledger under .agentx/state/clarifications/: it must parse, pass
agentx's validation and the AgentX ledger schema (agentx's own "agentx" key
aside; a ledger from another AgentX tool that bends the schema is a warning;
a ledger version that passed is remembered in .agentx/state/doctor/ and not
checked against the schema again).
Find lock files left by dead processes and temp files left by killed writers,
and verify the per-issue index of open clarifications (.agentx/state/index/)
against the ledgers, and decision memory (index/decisions-v1, once an ask
made it) against their resolved clarifications. Check the files beside them: agent-status.json, the hook
records (hooks/issue-N.json) and the inbox marks (inbox/AGENT.json) must parse
and be regular files, not links; the end of the event log (events.jsonl, its
last MiB) must be whole events, ending in a newline; state/.gitignore must
have each pattern agentx init writes (a workspace made by an earlier version
may lack some, and a killed process's leftovers could then be committed).
Report, per issue, the writes that gave up waiting for its ledger's lock in
the last 24 hours (lock-timeout events: a warning naming the holder). In
remote mode, each issue's sync state (.agentx/state/remote/issue-N.json, the
outbox of changes not yet published) must parse; it is a record, never moved
aside.

With --fix, stale locks and old temp files are removed, the index and
decision memory are made afresh from the ledgers, a status, hook or inbox file that does not parse is moved
aside (NAME.corrupt-TIME: its content is kept, and the next write starts it
afresh), a torn last event line is ended with a newline, and the patterns
state/.gitignore lacks are appended to it. A corrupt ledger is never
rewritten, nor the event log: fix the ledger by hand or move it aside.
A symbolic link is reported, never followed or removed. Exits 7 while errors
remain.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().BoolVar(&o.fix, "fix", false, "remove stale locks and old temp files, rebuild the index, move unreadable state files aside, end a torn event line")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *doctorOptions) run(ctx context.Context, a *App) error {
	ws, err := a.open()
	if err != nil {
		return err
	}
	if a.getenv("GOMEMLIMIT") == "" {
		// the event log is streamed: what stays is bounded by the
		// ledgers, and a soft limit keeps the garbage of a million
		// decoded lines from growing the process (a person's own
		// GOMEMLIMIT wins)
		debug.SetMemoryLimit(doctorMemory)
	}
	r, err := doctor.Run(ctx, ws.Store, doctor.Options{Fix: o.fix, StaleAge: ws.Rules.Config.Lock.StaleAge.Duration, Now: a.now, Gitignore: workspace.StateGitignore})
	if err != nil {
		return err
	}
	for _, agent := range untrustedResumes(a.trustGate(ws.Root, ws.Rules), ws.Rules) {
		r.Findings = append(r.Findings, doctor.Finding{Check: doctor.CheckWake, Severity: doctor.Warning,
			Path: filepath.Join(ws.Root, workspace.Dir, "config.toml"), Problem: untrustedResumeNote(agent), Action: "agentx trust"})
	}
	if err := a.emit(r, func() { o.text(a.stdout, ws.Root, r) }); err != nil {
		return err
	}
	if r.Remaining > 0 {
		hint := "run agentx doctor --fix"
		if o.fix {
			hint = "what --fix cannot repair needs a person: see each problem's note"
		}
		return &codedError{Code: ExitInvalidData, Msg: fmt.Sprintf("%d %s remain in the workspace", r.Remaining, words.Plural(r.Remaining, "problem", "problems")), Todo: hint, Quiet: !a.json}
	}
	return nil
}

// text prints the report for a person, paths relative to root.
func (o *doctorOptions) text(w io.Writer, root string, r *doctor.Report) {
	fmt.Fprintf(w, "Checked %s (%s, %d open) and %s.\n",
		words.Count(r.Ledgers, "ledger", "ledgers"), words.Count(r.Clarifications, "clarification", "clarifications"), r.Open, words.Count(r.LockFiles, "lock file", "lock files"))
	for _, f := range r.Findings {
		path := f.Path
		if rel, err := filepath.Rel(root, path); err == nil {
			path = rel
		}
		state := ""
		if f.Fixed {
			state = " [fixed]"
		}
		fmt.Fprintf(w, "  %s\n", safetext.Line(fmt.Sprintf("%-7s %-6s %s: %s%s", f.Severity, f.Check, path, f.Problem, state)))
		if f.Action != "" {
			fmt.Fprintf(w, "          -> %s\n", safetext.Line(f.Action))
		}
	}
	if r.Remaining == 0 {
		fmt.Fprintf(w, "Healthy.\n")
	} else {
		fmt.Fprintf(w, "%d %s.\n", r.Remaining, words.Plural(r.Remaining, "problem remains", "problems remain"))
	}
}
