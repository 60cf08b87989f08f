package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/gate/evaluate"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// afterFailure proposes an enhancement when the checks that just failed
// on issue failed on other issues too. A failure is a warning: the
// evaluation is recorded.
func afterFailure(ctx context.Context, a *App, h *router.Hub, issue int, at *evaluate.Attempt) []*proposal.Proposal {
	ps, err := proposal.Observe(ctx, h, issue, at)
	a.warnIf(err)
	for _, p := range ps { // on stderr: stdout may be a hook's JSON
		if !a.json {
			fmt.Fprintf(a.stderr, "agentx: proposal %s is %s: %s (agentx proposals show %s)\n", safetext.Line(p.ID), p.Status, safetext.Line(p.Title), safetext.Line(p.ID))
		}
	}
	return ps
}

func newProposalsCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "proposals",
		Short: "Enhancement proposals: agents and the gate propose, only a person approves or rejects",
		Long: `An enhancement proposal asks for a new skill, a tool fix, a config change or
a workflow improvement. Agents may propose (proposals create); the supervisor
gate proposes a new skill when the same check fails on two or more issues,
with the evidence. Nothing is approved automatically: only a person, from a
shell without AGENTX_AGENT, approves, rejects or marks one implemented (an
agent is refused with exit 4, identity_mismatch). Statuses: pending →
approved | rejected; approved → implemented.`,
	}
	cmd.AddCommand(newProposalsCreateCmd(a), newProposalsListCmd(a), newProposalsShowCmd(a),
		newProposalDecideCmd(a, "approve", proposal.Approved),
		newProposalDecideCmd(a, "reject", proposal.Rejected),
		newProposalDecideCmd(a, "implemented", proposal.Implemented))
	return cmd
}

// proposalsCreateOptions are `agentx proposals create`'s flags.
type proposalsCreateOptions struct {
	p      proposal.Proposal
	issues []int
	as     string
}

func newProposalsCreateCmd(a *App) *cobra.Command {
	o := &proposalsCreateOptions{}
	cmd := &cobra.Command{
		Use:     "create --type T --title T --rationale R --action A [--impact low|medium|high] [--risk low|medium|high] [--issue N...]",
		Short:   "Propose an enhancement (pending until a person decides)",
		Example: `  agentx proposals create --type tool_fix --title "Flaky e2e runner" --rationale "Timed out on 3 issues" --action "Raise its timeout"`,
		Args:    cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&o.p.Type, "type", "", "new_skill, tool_fix, config_change or workflow_improvement")
	f.StringVar(&o.p.Title, "title", "", "one line")
	f.StringVar(&o.p.Rationale, "rationale", "", "what triggered it: the evidence")
	f.StringVar(&o.p.Action, "action", "", "what should be done")
	f.StringVar(&o.p.Impact, "impact", "medium", "low, medium or high")
	f.StringVar(&o.p.Risk, "risk", "low", "low, medium or high")
	f.IntSliceVar(&o.issues, "issue", nil, "an issue behind it (repeat, or comma-separated)")
	f.StringVar(&o.as, "as", "", "the person proposing (a person, at a terminal of their own)")
	for _, req := range []string{"type", "title", "rationale", "action"} {
		_ = cmd.MarkFlagRequired(req)
	}
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *proposalsCreateOptions) run(ctx context.Context, a *App) error {
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	by, err := actor(a, o.as)
	if err != nil {
		return err
	}
	p := o.p
	p.CreatedBy, p.Issues = by, o.issues
	out, err := proposal.Create(ctx, h, p)
	if err != nil {
		return err
	}
	a.pushAfter = true // post it where channels exist, once the command is done
	return a.emit(out, func() { printProposal(a.stdout, a.paint(boldAttr), out) })
}

// proposalsListOptions are `agentx proposals list`'s flags.
type proposalsListOptions struct {
	status string
}

func newProposalsListCmd(a *App) *cobra.Command {
	o := &proposalsListOptions{}
	cmd := &cobra.Command{
		Use:   "list [--status S]",
		Short: "The proposals, oldest first (--status pending, approved, rejected or implemented)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
	cmd.Flags().StringVar(&o.status, "status", "", "only proposals with this status")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *proposalsListOptions) run(a *App) error {
	if o.status != "" {
		if err := proposal.CheckStatus("status", o.status); err != nil {
			return err // worded --status; exit 2
		}
	}
	b, err := proposalBook(a)
	if err != nil {
		return err
	}
	out := []*proposal.Proposal{}
	for _, p := range b.Proposals {
		if o.status == "" || string(p.Status) == o.status {
			out = append(out, p)
		}
	}
	return a.emit(out, func() {
		if len(out) == 0 {
			a.printf("No proposals.\n")
			return
		}
		t := table{}
		t.add(plain("ID", "STATUS", "TYPE", "ISSUES", "BY", "TITLE")...)
		for _, p := range out {
			t.add(plain(p.ID, string(p.Status), p.Type, issuesText(p.Issues), p.CreatedBy, p.Title)...)
		}
		t.write(a.stdout, "")
	})
}

func issuesText(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("#%d", n)
	}
	return strings.Join(parts, " ")
}

// issuesOrNone is issuesText, or "(no issue)".
func issuesOrNone(ns []int) string {
	if len(ns) == 0 {
		return "(no issue)"
	}
	return issuesText(ns)
}

// proposalsShowOptions are `agentx proposals show`'s argument.
type proposalsShowOptions struct {
	id string
}

func newProposalsShowCmd(a *App) *cobra.Command {
	o := &proposalsShowOptions{}
	return &cobra.Command{
		Use:   "show ID",
		Short: "One proposal with its rationale, action and evidence",
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.id = args[0]
			return o.run(a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *proposalsShowOptions) run(a *App) error {
	b, err := proposalBook(a)
	if err != nil {
		return err
	}
	p := b.Find(o.id)
	if p == nil {
		return fmt.Errorf("proposal %s: %w", o.id, ledger.ErrNotFound)
	}
	return a.emit(p, func() { printProposal(a.stdout, a.paint(boldAttr), p) })
}

// printProposal prints a proposal for a person, its id in bold.
func printProposal(w io.Writer, bold func(string) string, p *proposal.Proposal) {
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	printf("%s  %s  %s  impact %s, risk %s\n", bold(safetext.Line(p.ID)), p.Status, safetext.Line(p.Type), safetext.Line(p.Impact), safetext.Line(p.Risk))
	printf("  %s\n", safetext.Line(p.Title))
	printf("  proposed by %s, %s", safetext.Line(p.CreatedBy), p.Created.UTC().Format("2006-01-02 15:04"))
	if len(p.Issues) > 0 {
		printf(", issues %s", issuesText(p.Issues))
	}
	printf("\n")
	printf("%s", safetext.Indent(p.Rationale, "  Rationale: ", "    "))
	printf("%s", safetext.Indent(p.Action, "  Action: ", "    "))
	for _, e := range p.Evidence {
		printf("  Evidence: #%d %s %s\n", e.Issue, safetext.Line(e.Eval), safetext.Line(e.Check))
		if e.Feedback != "" {
			printf("%s", safetext.Indent(e.Feedback, "    > ", "    > "))
		}
	}
	if p.ResolvedBy != "" {
		printf("  %s by %s, %s\n", p.Status, safetext.Line(p.ResolvedBy), p.ResolvedAt.UTC().Format("2006-01-02 15:04"))
	}
	if p.Reason != "" {
		printf("%s", safetext.Indent(p.Reason, "  Reason: ", "    "))
	}
	if d := p.Drafted; d != nil {
		printf("  drafted into %s by %s, %s\n", safetext.Line(d.Path), safetext.Line(d.By), d.At.UTC().Format("2006-01-02 15:04"))
	} else if p.Type == proposal.TypeNewSkill && p.Status == proposal.Approved {
		printf("  Draft the skill: agentx skills draft %s\n", p.ID)
	}
	if p.Status == proposal.Pending {
		printf("  A person decides, at a terminal of their own: agentx proposals approve %s, or agentx proposals reject %s --reason \"...\"\n", p.ID, p.ID)
	}
}

// proposalDecideOptions are the flags and argument of `agentx proposals
// approve`, reject and implemented, and the status each moves to.
type proposalDecideOptions struct {
	to         proposal.Status
	id         string
	reason, as string
}

func newProposalDecideCmd(a *App, verb string, to proposal.Status) *cobra.Command {
	o := &proposalDecideOptions{to: to}
	short := map[string]string{
		"approve":     "A person approves a pending proposal",
		"reject":      "A person rejects a pending proposal, with a reason",
		"implemented": "A person marks an approved proposal implemented",
	}[verb]
	cmd := &cobra.Command{
		Use:   verb + " ID",
		Short: short + " (never an agent: exit 4)",
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.id = args[0]
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().StringVar(&o.reason, "reason", "", "why (required to reject)")
	cmd.Flags().StringVar(&o.as, "as", "", "the person deciding (default: git user.email, user.name, $USER)")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *proposalDecideOptions) run(ctx context.Context, a *App) error {
	if o.as != "" {
		a.as = o.as
	}
	name, err := a.caller().Human()
	if err != nil {
		return err
	}
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	if o.to == proposal.Rejected && strings.TrimSpace(o.reason) == "" {
		return &usageError{Err: fmt.Errorf("reject needs --reason: say why, for whoever proposed it")}
	}
	p, err := proposal.Decide(ctx, h, o.id, o.to, name, o.reason)
	if proposal.IsTransition(err) {
		return &codedError{Code: ExitTransition, Msg: err.Error()}
	}
	if err != nil {
		return err
	}
	a.pushAfter = true // post the decision where channels exist, once the command is done
	return a.emit(p, func() { printProposal(a.stdout, a.paint(boldAttr), p) })
}

// actor is who acts where an agent or a person may: the process's agent
// (AGENTX_AGENT), else the person, as human:NAME (--as, git, $USER).
func actor(a *App, as string) (string, error) {
	if a.getenv(router.EnvAgent) != "" {
		// an agent: checked as every command checks who acts (not human,
		// not the hub, a well-formed name)
		by, err := a.caller().Claim("from", "")
		if err != nil {
			return "", err
		}
		return by, ledger.ValidateAgent(router.EnvAgent, by)
	}
	if as != "" {
		a.as = as
	}
	name, err := a.caller().Human()
	if err != nil {
		return "", err
	}
	return ledger.HumanAs(name), nil
}

// proposalBook reads the workspace's proposals.
func proposalBook(a *App) (*proposal.Book, error) {
	ws, err := a.open()
	if err != nil {
		return nil, err
	}
	return proposal.Read(ws.Store)
}
