package slackmode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/ledger"
)

// ProposalMetaType is the event type of the metadata of the messages about
// enhancement proposals: not MetaType, so that nothing that reads
// clarification threads takes one of them, or a reply in their threads,
// for a clarification's.
const ProposalMetaType = "agentx_proposal"

// ProposalMeta is that metadata: which entry of which proposal a message
// carries.
type ProposalMeta struct {
	ID       string // the proposal, PROP-001
	Entry    int    // 0: the proposal; k: its decision k-1; -1: new evidence
	Evidence string // the digest of the evidence the message shows (entries 0 and -1)
}

// metadata is the metadata a message carries: a Meta or a ProposalMeta.
type metadata interface{ slack() slack.SlackMetadata }

func (m ProposalMeta) slack() slack.SlackMetadata {
	p := map[string]any{"id": m.ID, "entry": m.Entry}
	if m.Entry <= 0 && m.Evidence != "" {
		p["evidence"] = m.Evidence
	}
	return slack.SlackMetadata{EventType: ProposalMetaType, EventPayload: p}
}

// proposalMetaOf reads agentx's proposal metadata from a message's, or nil.
func proposalMetaOf(sm slack.SlackMetadata) *ProposalMeta {
	id, entry, ok := payload(sm, ProposalMetaType)
	if !ok || !strings.HasPrefix(id, "PROP-") {
		return nil
	}
	ev, _ := sm.EventPayload["evidence"].(string)
	return &ProposalMeta{ID: id, Entry: entry, Evidence: ev}
}

// evidenceSum is the digest of p's evidence ("" for none).
func evidenceSum(p *proposal.Proposal) string {
	if len(p.Evidence) == 0 {
		return ""
	}
	var b strings.Builder
	for _, e := range p.Evidence {
		fmt.Fprintf(&b, "%d\x00%s\x00%s\x00%s\n", e.Issue, e.Eval, e.Check, e.Feedback)
	}
	h := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(h[:8])
}

// syncProposals posts the enhancement proposals to the channel, from
// SyncIssue of issue 0 (every proposal event queues it): each proposal a
// message, then in its thread new evidence and each person's decision,
// each recorded in proposals.json (mirror.slack) as soon as it is posted,
// through SyncIssue's poster p (a post whose result was lost is looked for
// by its metadata first, as the clarifications' messages are). Nothing reads these threads: people decide with the CLI. A
// proposal decided before it was ever posted (Slack mode turned on later)
// is not posted: nobody has to act on it.
func (m *Mode) syncProposals(ctx context.Context, rep *IssueReport, po *poster) error {
	b, err := proposal.Read(m.Hub.Store)
	if err != nil {
		return err
	}
	for _, p := range b.Proposals {
		if !toPost(p) {
			continue
		}
		if err := m.syncProposal(ctx, p, rep, po); err != nil {
			return err
		}
	}
	return nil
}

// toPost reports whether p belongs in the channel: pending, or posted
// already (its decisions follow).
func toPost(p *proposal.Proposal) bool {
	return p.Status == proposal.Pending || (p.Mirror != nil && p.Mirror.Slack != nil && p.Mirror.Slack.TS != "")
}

func (m *Mode) syncProposal(ctx context.Context, p *proposal.Proposal, rep *IssueReport, po *poster) error {
	var th *chanref.SlackThread
	told := ""
	if p.Mirror != nil {
		th, told = p.Mirror.Slack, p.Mirror.SlackEvidence
	}
	sum := evidenceSum(p)
	if th == nil || th.TS == "" {
		key := entryKey(p.ID, 0)
		var ts string
		if po.Lost(key) {
			since := p.Created.Add(-10 * time.Minute)
			ms, err := m.proposalPosts(ctx, p.ID, func() ([]Message, error) { return m.Client.History(ctx, m.Config.Channel, since) })
			if err != nil {
				return err
			}
			if msg := findProposal(ms, 0, ""); msg != nil {
				ts, told = msg.TS, msg.Proposal.Evidence
				rep.Found++
			}
		}
		if ts == "" {
			var err error
			if ts, err = po.post(ctx, key, m.Config.Channel, "", RenderProposal(p), ProposalMeta{ID: p.ID, Entry: 0, Evidence: sum}); err != nil {
				return err
			}
			told = sum
			rep.Posted++
		}
		var err error
		if th, err = m.recordProposal(ctx, p.ID, func(mir *proposal.Mirror) {
			mir.Slack.TS = ts
			if mir.Slack.Post(0) == nil {
				mir.Slack.Posts = append(mir.Slack.Posts, chanref.SlackPost{Entry: 0, TS: ts})
			}
			mir.SlackEvidence = told
		}); err != nil {
			return err
		}
		po.Recorded(key)
	}
	var replies []Message
	// posted is whether the thread shows agentx posted the entry key
	// names (with evidence, if not ""): read only for a post whose result
	// was lost.
	posted := func(key string, entry int, evidence string) (*Message, error) {
		if !po.Lost(key) {
			return nil, nil
		}
		if replies == nil {
			var err error
			replies, err = m.proposalPosts(ctx, p.ID, func() ([]Message, error) { return m.Client.Replies(ctx, th.Channel, th.TS, "") })
			if err != nil {
				return nil, err
			}
			if replies == nil {
				replies = []Message{}
			}
		}
		return findProposal(replies, entry, evidence), nil
	}
	if sum != "" && sum != told {
		key := p.ID + "/evidence-" + sum
		msg, err := posted(key, -1, sum)
		if err != nil {
			return err
		}
		if msg != nil {
			rep.Found++
		} else {
			if _, err := po.post(ctx, key, th.Channel, th.TS, RenderProposalEvidence(p), ProposalMeta{ID: p.ID, Entry: -1, Evidence: sum}); err != nil {
				return err
			}
			rep.Posted++
		}
		if th, err = m.recordProposal(ctx, p.ID, func(mir *proposal.Mirror) { mir.SlackEvidence = sum }); err != nil {
			return err
		}
		po.Recorded(key)
	}
	for i := 1; i < p.Entries(); i++ {
		key := entryKey(p.ID, i)
		if th.Post(i) != nil {
			po.Recorded(key)
			continue
		}
		msg, err := posted(key, i, "")
		if err != nil {
			return err
		}
		var ts string
		if msg != nil {
			ts = msg.TS
			rep.Found++
		} else {
			if ts, err = po.post(ctx, key, th.Channel, th.TS, RenderProposalDecision(p, i-1), ProposalMeta{ID: p.ID, Entry: i}); err != nil {
				return err
			}
			rep.Posted++
		}
		if th, err = m.recordProposal(ctx, p.ID, func(mir *proposal.Mirror) {
			if mir.Slack.Post(i) == nil {
				mir.Slack.Posts = append(mir.Slack.Posts, chanref.SlackPost{Entry: i, TS: ts})
			}
		}); err != nil {
			return err
		}
		po.Recorded(key)
	}
	return nil
}

// proposalPosts are the messages list shows agentx posted about proposal
// id (by their metadata, on bots' messages).
func (m *Mode) proposalPosts(ctx context.Context, id string, list func() ([]Message, error)) ([]Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ms, err := list()
	if err != nil {
		return nil, err
	}
	var out []Message
	for _, msg := range ms {
		if msg.Bot && msg.Proposal != nil && msg.Proposal.ID == id {
			out = append(out, msg)
		}
	}
	return out, nil
}

// findProposal is the first of ms carrying entry (and, evidence not "",
// that evidence), or nil.
func findProposal(ms []Message, entry int, evidence string) *Message {
	for k := range ms {
		if pm := ms[k].Proposal; pm.Entry == entry && (evidence == "" || pm.Evidence == evidence) {
			return &ms[k]
		}
	}
	return nil
}

// recordProposal records in proposals.json what fn sets on the proposal's
// mirror (its Slack thread made if need be) and returns the thread as
// recorded.
func (m *Mode) recordProposal(ctx context.Context, id string, fn func(mir *proposal.Mirror)) (*chanref.SlackThread, error) {
	var th chanref.SlackThread
	err := proposal.RecordMirror(ctx, m.Hub.Store, id, func(p *proposal.Proposal) error {
		if p.Mirror.Slack == nil {
			p.Mirror.Slack = &chanref.SlackThread{Channel: m.Config.Channel}
		}
		fn(p.Mirror)
		th = *p.Mirror.Slack
		return nil
	})
	return &th, err
}

// proposer names who proposed or decided: an agent, agentx, or a person
// (a Slack user by their member id as plain text; any other name, an
// email from git config, is not published in the channel).
func proposer(by string) string {
	name, person := strings.CutPrefix(by, ledger.Human+":")
	if !person && by != ledger.Human {
		return line(by)
	}
	if id, ok := strings.CutPrefix(name, PersonPrefix); ok {
		return "a person (" + line(id) + " in Slack)"
	}
	return "a person"
}

// RenderProposal is the message that opens proposal p's thread: what,
// why, the evidence, and how a person decides (the CLI: nothing in the
// thread is read).
func RenderProposal(p *proposal.Proposal) string {
	var b strings.Builder
	id := line(p.ID)
	fmt.Fprintf(&b, ":bulb: *Enhancement proposal %s* from %s · %s · impact %s, risk %s\n", id, proposer(p.CreatedBy), line(p.Type), line(p.Impact), line(p.Risk))
	fmt.Fprintf(&b, "*%s*\n", line(p.Title))
	fmt.Fprintf(&b, "*Why:*\n%s\n*What:*\n%s\n", quote(p.Rationale), quote(p.Action))
	if len(p.Evidence) > 0 {
		b.WriteString("*Evidence:*\n")
		writeEvidence(&b, p)
	}
	fmt.Fprintf(&b, "It stays pending until a person approves or rejects it (never an agent), from a shell without `AGENTX_AGENT`:\n```\nagentx proposals approve %s\nagentx proposals reject %s --reason \"...\"\n```\n", id, id)
	b.WriteString("Replies in this thread are not read: approvals are not taken here. The decision follows in this thread.\n")
	return cutAt(b.String(), "`agentx proposals show "+id+"`")
}

// writeEvidence lists p's evidence, a line each.
func writeEvidence(b *strings.Builder, p *proposal.Proposal) {
	for _, e := range p.Evidence {
		fmt.Fprintf(b, "• issue #%d: %s, check %s", e.Issue, line(e.Eval), line(e.Check))
		if e.Feedback != "" {
			fmt.Fprintf(b, ": %s", line(e.Feedback))
		}
		b.WriteString("\n")
	}
}

// RenderProposalEvidence tells p's thread of its evidence as it is now.
func RenderProposalEvidence(p *proposal.Proposal) string {
	var b strings.Builder
	fmt.Fprintf(&b, ":mag: *New evidence for %s*: the failures behind it are now\n", line(p.ID))
	writeEvidence(&b, p)
	return cutAt(b.String(), "`agentx proposals show "+line(p.ID)+"`")
}

// RenderProposalDecision tells p's thread of decision k.
func RenderProposalDecision(p *proposal.Proposal, k int) string {
	d := p.Decisions[k]
	icon := map[proposal.Status]string{proposal.Approved: ":white_check_mark:", proposal.Rejected: ":x:", proposal.Implemented: ":rocket:"}[d.Status]
	var b strings.Builder
	fmt.Fprintf(&b, "%s *Proposal %s %s* by %s · %s\n", icon, line(p.ID), line(string(d.Status)), proposer(d.By), line(p.Title))
	if d.Reason != "" {
		fmt.Fprintf(&b, "%s\n", quote(d.Reason))
	}
	if d.Status == proposal.Approved && p.Type == proposal.TypeNewSkill {
		fmt.Fprintf(&b, "Next: `agentx skills draft %s`.\n", line(p.ID))
	}
	return cutAt(b.String(), "`agentx proposals show "+line(p.ID)+"`")
}
