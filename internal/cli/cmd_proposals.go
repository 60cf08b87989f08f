package cli

import (
	"context"
	"fmt"
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

func newProposalsCreateCmd(a *App) *cobra.Command {
	var (
		p      proposal.Proposal
		issues []int
		as     string
	)
	cmd := &cobra.Command{
		Use:     "create --type T --title T --rationale R --action A [--impact low|medium|high] [--risk low|medium|high] [--issue N...]",
		Short:   "Propose an enhancement (pending until a person decides)",
		Example: `  agentx proposals create --type tool_fix --title "Flaky e2e runner" --rationale "Timed out on 3 issues" --action "Raise its timeout"`,
		Args:    cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			by, err := a.actor(as)
			if err != nil {
				return err
			}
			p.CreatedBy, p.Issues = by, issues
			out, err := proposal.Create(ctx, h, p)
			if err != nil {
				return err
			}
			a.pushAfter = true // post it where channels exist, once the command is done
			return a.emit(out, func() { a.printProposal(out) })
		}),
	}
	f := cmd.Flags()
	f.StringVar(&p.Type, "type", "", "new_skill, tool_fix, config_change or workflow_improvement")
	f.StringVar(&p.Title, "title", "", "one line")
	f.StringVar(&p.Rationale, "rationale", "", "what triggered it: the evidence")
	f.StringVar(&p.Action, "action", "", "what should be done")
	f.StringVar(&p.Impact, "impact", "medium", "low, medium or high")
	f.StringVar(&p.Risk, "risk", "low", "low, medium or high")
	f.IntSliceVar(&issues, "issue", nil, "an issue behind it (repeat, or comma-separated)")
	f.StringVar(&as, "as", "", "the person proposing (a person, at a terminal of their own)")
	for _, req := range []string{"type", "title", "rationale", "action"} {
		_ = cmd.MarkFlagRequired(req)
	}
	return cmd
}

func newProposalsListCmd(a *App) *cobra.Command {
	var status string
	cmd := &cobra.Command{
		Use:   "list [--status S]",
		Short: "The proposals, oldest first (--status pending, approved, rejected or implemented)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if status != "" {
				if err := proposal.CheckStatus("status", status); err != nil {
					return err // worded --status; exit 2
				}
			}
			b, err := a.proposalBook()
			if err != nil {
				return err
			}
			out := []*proposal.Proposal{}
			for _, p := range b.Proposals {
				if status == "" || string(p.Status) == status {
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
		}),
	}
	cmd.Flags().StringVar(&status, "status", "", "only proposals with this status")
	return cmd
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

func newProposalsShowCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "One proposal with its rationale, action and evidence",
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			b, err := a.proposalBook()
			if err != nil {
				return err
			}
			p := b.Find(args[0])
			if p == nil {
				return fmt.Errorf("proposal %s: %w", args[0], ledger.ErrNotFound)
			}
			return a.emit(p, func() { a.printProposal(p) })
		}),
	}
}

func (a *App) printProposal(p *proposal.Proposal) {
	a.printf("%s  %s  %s  impact %s, risk %s\n", a.paint(boldAttr)(safetext.Line(p.ID)), p.Status, safetext.Line(p.Type), safetext.Line(p.Impact), safetext.Line(p.Risk))
	a.printf("  %s\n", safetext.Line(p.Title))
	a.printf("  proposed by %s, %s", safetext.Line(p.CreatedBy), p.Created.UTC().Format("2006-01-02 15:04"))
	if len(p.Issues) > 0 {
		a.printf(", issues %s", issuesText(p.Issues))
	}
	a.printf("\n")
	a.printf("%s", safetext.Indent(p.Rationale, "  Rationale: ", "    "))
	a.printf("%s", safetext.Indent(p.Action, "  Action: ", "    "))
	for _, e := range p.Evidence {
		a.printf("  Evidence: #%d %s %s\n", e.Issue, safetext.Line(e.Eval), safetext.Line(e.Check))
		if e.Feedback != "" {
			a.printf("%s", safetext.Indent(e.Feedback, "    > ", "    > "))
		}
	}
	if p.ResolvedBy != "" {
		a.printf("  %s by %s, %s\n", p.Status, safetext.Line(p.ResolvedBy), p.ResolvedAt.UTC().Format("2006-01-02 15:04"))
	}
	if p.Reason != "" {
		a.printf("%s", safetext.Indent(p.Reason, "  Reason: ", "    "))
	}
	if d := p.Drafted; d != nil {
		a.printf("  drafted into %s by %s, %s\n", safetext.Line(d.Path), safetext.Line(d.By), d.At.UTC().Format("2006-01-02 15:04"))
	} else if p.Type == proposal.TypeNewSkill && p.Status == proposal.Approved {
		a.printf("  Draft the skill: agentx skills draft %s\n", p.ID)
	}
	if p.Status == proposal.Pending {
		a.printf("  A person decides, at a terminal of their own: agentx proposals approve %s, or agentx proposals reject %s --reason \"...\"\n", p.ID, p.ID)
	}
}

func newProposalDecideCmd(a *App, verb string, to proposal.Status) *cobra.Command {
	var reason, as string
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
			if as != "" {
				a.as = as
			}
			name, err := a.caller().Human()
			if err != nil {
				return err
			}
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			if to == proposal.Rejected && strings.TrimSpace(reason) == "" {
				return &usageError{Err: fmt.Errorf("reject needs --reason: say why, for whoever proposed it")}
			}
			p, err := proposal.Decide(ctx, h, args[0], to, name, reason)
			if proposal.IsTransition(err) {
				return &codedError{Code: ExitTransition, Msg: err.Error()}
			}
			if err != nil {
				return err
			}
			a.pushAfter = true // post the decision where channels exist, once the command is done
			return a.emit(p, func() { a.printProposal(p) })
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required to reject)")
	cmd.Flags().StringVar(&as, "as", "", "the person deciding (default: git user.email, user.name, $USER)")
	return cmd
}

// actor is who acts where an agent or a person may: the process's agent
// (AGENTX_AGENT), else the person, as human:NAME (--as, git, $USER).
func (a *App) actor(as string) (string, error) {
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
func (a *App) proposalBook() (*proposal.Book, error) {
	ws, err := a.open()
	if err != nil {
		return nil, err
	}
	return proposal.Read(ws.Store)
}
