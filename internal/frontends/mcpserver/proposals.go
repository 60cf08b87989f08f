package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/ledger"
)

// ProposalType is a proposal's type: one of proposal.Types.
type ProposalType string

// Level is a proposal's impact or risk: one of proposal.Levels.
type Level string

// ProposalCreateInput is proposal_create's input.
type ProposalCreateInput struct {
	Type      ProposalType `json:"type" jsonschema:"what kind of enhancement"`
	Title     string       `json:"title" jsonschema:"one line, up to 200 bytes"`
	Rationale string       `json:"rationale" jsonschema:"what triggered it: the evidence"`
	Action    string       `json:"action" jsonschema:"what should be done"`
	Impact    Level        `json:"impact,omitempty" jsonschema:"how much it would help (default medium)"`
	Risk      Level        `json:"risk,omitempty" jsonschema:"how much it could break (default low)"`
	Issues    []int        `json:"issues,omitempty" jsonschema:"the issues behind it"`
	From      string       `json:"from,omitempty" jsonschema:"who proposes: leave it out, you act as this server's agent (AGENTX_AGENT); only a server without one needs it. Never human"`
}

// ProposalListInput is proposal_list's input.
type ProposalListInput struct {
	Status proposal.Status `json:"status,omitempty" jsonschema:"only this status"`
	Issue  *int            `json:"issue,omitempty" jsonschema:"only proposals naming this issue"`
}

// ProposalShowInput is proposal_show's input.
type ProposalShowInput struct {
	ID string `json:"id" jsonschema:"the proposal id, such as PROP-001"`
}

// ProposalResult is one proposal, with what happens next.
type ProposalResult struct {
	Proposal *proposal.Proposal `json:"proposal"`
	Guidance string             `json:"guidance" jsonschema:"what happens next"`
}

// ProposalItem is one proposal in a list.
type ProposalItem struct {
	ID        string          `json:"id"`
	Type      ProposalType    `json:"type"`
	Status    proposal.Status `json:"status"`
	Title     string          `json:"title"`
	Issues    []int           `json:"issues"`
	CreatedBy string          `json:"createdBy"`
	Created   ledger.Time     `json:"created"`
}

// ProposalListResult is proposal_list's result.
type ProposalListResult struct {
	Proposals []ProposalItem `json:"proposals"`
}

// addProposalTools registers the proposal tools. There is no tool to
// approve, reject or mark one implemented: only a person decides, and the
// server never acts as a person.
func (s *server) addProposalTools(readOnly *mcp.ToolAnnotations, write func(string) *mcp.ToolAnnotations) {
	addTool(s, &mcp.Tool{Name: "proposal_create", Annotations: write("Propose an enhancement"),
		Description: "Propose an enhancement (a new skill, a tool fix, a config change, a workflow improvement) when something keeps getting in the way of your work. " +
			"It stays pending until a person approves or rejects it; agents never decide proposals."}, s.proposalCreate)
	addTool(s, &mcp.Tool{Name: "proposal_list", Annotations: readOnly,
		Description: "List the enhancement proposals, oldest first, by status or issue."}, s.proposalList)
	addTool(s, &mcp.Tool{Name: "proposal_show", Annotations: readOnly,
		Description: "Show one enhancement proposal: rationale, action, evidence, and a person's decision if made."}, s.proposalShow)
}

func (s *server) proposalCreate(ctx context.Context, in ProposalCreateInput) (ProposalResult, string, error) {
	by, err := s.asker(in.From)
	if err != nil {
		return ProposalResult{}, "", err
	}
	if err := ledger.ValidateAgent("from", by); err != nil {
		return ProposalResult{}, "", err // human:NAME is a person's name: never the server's
	}
	p, err := proposal.Create(ctx, s.hub, proposal.Proposal{
		Type: string(in.Type), Title: in.Title, Rationale: in.Rationale, Action: in.Action,
		Impact: string(in.Impact), Risk: string(in.Risk), Issues: in.Issues, CreatedBy: by,
	})
	if err != nil {
		return ProposalResult{}, "", err
	}
	s.log.Info("proposed", "id", p.ID, "by", by)
	r := ProposalResult{Proposal: p, Guidance: guidanceOf(p)}
	return r, renderProposal(r), nil
}

func (s *server) proposalList(ctx context.Context, in ProposalListInput) (ProposalListResult, string, error) {
	if in.Status != "" {
		if err := proposal.CheckStatus("status", string(in.Status)); err != nil {
			return ProposalListResult{}, "", err
		}
	}
	b, err := proposal.Read(s.hub.Store)
	if err != nil {
		return ProposalListResult{}, "", err
	}
	out := ProposalListResult{Proposals: []ProposalItem{}}
	for _, p := range b.Proposals {
		if (in.Status != "" && p.Status != in.Status) || (in.Issue != nil && !slices.Contains(p.Issues, *in.Issue)) {
			continue
		}
		issues := p.Issues
		if issues == nil {
			issues = []int{}
		}
		out.Proposals = append(out.Proposals, ProposalItem{ID: p.ID, Type: ProposalType(p.Type), Status: p.Status, Title: p.Title, Issues: issues, CreatedBy: p.CreatedBy, Created: p.Created})
	}
	var t strings.Builder
	if len(out.Proposals) == 0 {
		t.WriteString("No proposals.\n")
	}
	for _, p := range out.Proposals {
		fmt.Fprintf(&t, "%s %s %s %s by %s: %s\n", line(p.ID), p.Status, line(string(p.Type)), issuesLabel(p.Issues), line(p.CreatedBy), line(p.Title))
	}
	return out, t.String(), nil
}

func (s *server) proposalShow(ctx context.Context, in ProposalShowInput) (ProposalResult, string, error) {
	b, err := proposal.Read(s.hub.Store)
	if err != nil {
		return ProposalResult{}, "", err
	}
	p := b.Find(in.ID)
	if p == nil {
		return ProposalResult{}, "", fmt.Errorf("proposal %s: %w", in.ID, ledger.ErrNotFound)
	}
	r := ProposalResult{Proposal: p, Guidance: guidanceOf(p)}
	return r, renderProposal(r), nil
}

// guidanceOf says what happens to p next, for the agent.
func guidanceOf(p *proposal.Proposal) string {
	switch p.Status {
	case proposal.Pending:
		return fmt.Sprintf("%s waits for a person: only a person approves or rejects it (agentx proposals approve %s, at a terminal of their own). Go on with your work meanwhile; proposal_show tells you the decision.", p.ID, p.ID)
	case proposal.Approved:
		if p.Type == proposal.TypeNewSkill && p.Drafted == nil {
			return fmt.Sprintf("Approved by a person. The skill can be drafted: agentx skills draft %s.", p.ID)
		}
		return "Approved by a person: it may be carried out."
	case proposal.Rejected:
		return "Rejected by a person: do not act on it; the reason says why."
	}
	return "Implemented."
}

func issuesLabel(ns []int) string {
	if len(ns) == 0 {
		return "(no issue)"
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("#%d", n)
	}
	return strings.Join(parts, " ")
}

func renderProposal(r ProposalResult) string {
	p := r.Proposal
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %s, %s): %s\n", line(p.ID), p.Status, line(p.Type), issuesLabel(p.Issues), line(p.Title))
	fmt.Fprintf(&b, "proposed by %s; impact %s, risk %s\n", line(p.CreatedBy), line(p.Impact), line(p.Risk))
	fmt.Fprintf(&b, "Rationale:\n%s\nAction:\n%s\n", block(p.Rationale), block(p.Action))
	for _, e := range p.Evidence {
		fmt.Fprintf(&b, "Evidence: #%d %s %s\n", e.Issue, line(e.Eval), line(e.Check))
		if e.Feedback != "" {
			fmt.Fprintf(&b, "%s\n", block(e.Feedback))
		}
	}
	for _, d := range p.Decisions {
		fmt.Fprintf(&b, "%s by %s\n", d.Status, line(d.By))
		if d.Reason != "" {
			fmt.Fprintf(&b, "%s\n", block(d.Reason))
		}
	}
	fmt.Fprintf(&b, "Next: %s\n", line(r.Guidance))
	return b.String()
}
