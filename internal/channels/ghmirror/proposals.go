package ghmirror

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/ledger"
)

// syncProposals posts the enhancement proposals that name issue n on it:
// the proposal (edited in place when the gate adds evidence), then each
// person's decision, each recorded in proposals.json as soon as it is
// posted, through SyncIssue's poster p (a post whose result was lost is
// looked for first, as for thread entries).
func (m *Mirror) syncProposals(ctx context.Context, n int, rep *IssueReport, p *poster) error {
	b, err := proposal.Read(m.Hub.Store)
	if err != nil {
		return err
	}
	for _, pr := range b.Proposals {
		if !slices.Contains(pr.Issues, n) {
			continue
		}
		for i := range pr.Entries() {
			text := RenderProposal(pr, i, m.Config.Mention)
			ref := pr.GitHubRef(n, i)
			if ref != nil {
				p.recorded(entryKey{pr.ID, i})
			}
			if ref != nil && (ref.Sum == Sum(text) || i > 0) {
				continue // a decision, once posted, stays as it was
			}
			if ref != nil {
				if err := m.Client.Edit(ctx, ref.Comment, text); err != nil {
					return err
				}
				if err := m.recordProposal(ctx, pr.ID, n, i, ref.Comment, Sum(text)); err != nil {
					return err
				}
				rep.Edited++
				continue
			}
			key := entryKey{pr.ID, i}
			id, found, err := p.found(ctx, key)
			if err != nil {
				return err
			}
			sum := ""
			if found {
				rep.Found++
			} else {
				got, err := p.create(ctx, key, text)
				if err != nil {
					return err
				}
				id, sum = got.ID, Sum(text)
				rep.Posted++
			}
			if err := m.recordProposal(ctx, pr.ID, n, i, id, sum); err != nil {
				return err
			}
			p.recorded(key)
		}
	}
	return nil
}

// recordProposal writes the comment of entry i of proposal id on issue n
// into proposals.json.
func (m *Mirror) recordProposal(ctx context.Context, id string, n, i int, comment int64, sum string) error {
	return proposal.RecordMirror(ctx, m.Hub.Store, id, func(p *proposal.Proposal) error {
		ref := proposal.GitHubRef{Issue: n, GitHubRef: chanref.GitHubRef{Entry: i, Comment: comment, Sum: sum}}
		if r := p.GitHubRef(n, i); r != nil {
			*r = ref
			return nil
		}
		p.Mirror.GitHub = append(p.Mirror.GitHub, ref)
		return nil
	})
}

// actor is how a comment names who proposed or decided: an agent, agentx,
// a GitHub login; any other person's name (an email from git config) is
// not published on the issue.
func actor(by string) string {
	name, person := strings.CutPrefix(by, ledger.Human+":")
	if !person && by != ledger.Human {
		return mdLine(by)
	}
	if login, ok := strings.CutPrefix(name, PersonPrefix); ok {
		return "human (" + mdLine(PersonPrefix+login) + ")"
	}
	return "human"
}

// RenderProposal is the comment that carries entry i of proposal p: the
// proposal (what, why, evidence, and how a person decides, with the
// configured people to @mention) or, i > 0, decision i-1.
func RenderProposal(p *proposal.Proposal, i int, mentions []string) string {
	var b strings.Builder
	id := mdLine(p.ID)
	if i == 0 {
		fmt.Fprintf(&b, "**[%s] Enhancement proposal %s** · %s · impact %s, risk %s\n\n", actor(p.CreatedBy), id, mdLine(p.Type), mdLine(p.Impact), mdLine(p.Risk))
		fmt.Fprintf(&b, "**%s**\n\n", mdLine(p.Title))
		fmt.Fprintf(&b, "**Why:** %s\n\n**What:** %s\n", md(p.Rationale), md(p.Action))
		if len(p.Evidence) > 0 {
			b.WriteString("\n**Evidence:**\n")
			for _, e := range p.Evidence {
				fmt.Fprintf(&b, "- #%d %s, check %s", e.Issue, mdLine(e.Eval), mdLine(e.Check))
				if e.Feedback != "" {
					fmt.Fprintf(&b, ": %s", mdLine(e.Feedback))
				}
				b.WriteString("\n")
			}
		}
		if len(mentions) > 0 {
			fmt.Fprintf(&b, "\n%s: a person decides.", strings.Join(mentions, " "))
		}
		fmt.Fprintf(&b, "\nIt stays pending until a person approves or rejects it (never an agent), from a shell without `AGENTX_AGENT`:\n\n```\nagentx proposals approve %s\nagentx proposals reject %s --reason \"...\"\n```\n", p.ID, p.ID)
	} else {
		d := p.Decisions[i-1]
		fmt.Fprintf(&b, "**[%s] Proposal %s %s** · %s\n", actor(d.By), id, d.Status, mdLine(p.Title))
		if d.Reason != "" {
			fmt.Fprintf(&b, "\n%s\n", md(d.Reason))
		}
		if d.Status == proposal.Approved && p.Type == proposal.TypeNewSkill {
			fmt.Fprintf(&b, "\nNext: `agentx skills draft %s`.\n", p.ID)
		}
	}
	text := cutComment(b.String(), "`agentx proposals show "+p.ID+"`")
	entry := i
	return text + "\n" + Meta{ID: p.ID, Entry: &entry}.String()
}
