package router

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// changed is what follows every recorded change: the event is appended
// (one O_APPEND write, no lock). It cannot undo the change, so a failure
// goes to Warn. Agent statuses are not written here: they are derived on
// read (AgentStates), so a write to issue N touches only issue N's files.
func (h *Hub) changed(t EventType, rec Record, by, reason string) {
	h.changes.Add(1)
	ev := EventFor(t, rec.IssueNumber, rec.Clarification, h.now())
	ev.By, ev.Reason = by, reason
	if err := h.Events.Append(ev); err != nil {
		h.Warn(fmt.Errorf("event log: %w", err))
	}
}

// AgentState is one agent's status on one issue.
type AgentState struct {
	Agent string `json:"agent"`
	*ledger.AgentStatus
	// FromFile: the row is agent-status.json's entry for an agent that no
	// hook and no open question names (StateRows).
	FromFile bool `json:"-"`
}

// HooksDir holds the per-issue records of the agents' hooks.
const HooksDir = "hooks"

// HooksFile is the record of the agents' hooks on issue n.
func HooksFile(n int) string {
	return filepath.Join(HooksDir, "issue-"+strconv.Itoa(n)+".json")
}

// AgentStates derives every agent's status on every issue it is busy
// with, from the open clarifications and the hooks, so that it agrees with
// `ready` by construction:
//
//   - blocked-clarification while a question it asked on the issue holds
//     the issue up (BlockerOf: a blocking one pending, stale or escalated),
//     waiting on the one asked, or on a human once escalated;
//   - else clarifying while a question to it on the issue is pending or stale;
//   - else what its last hook on the issue said (working, reviewing, done),
//     or working when it holds an answer it has not resolved yet.
//
// Agents are told apart per issue: two engineers on two issues are two rows.
func (h *Hub) AgentStates() ([]AgentState, []error, error) {
	ix, skipped, err := h.Store.ReadOpen()
	if err != nil {
		return nil, nil, err
	}
	st := agentRows{rows: map[agentKey]*ledger.AgentStatus{}, rank: map[agentKey]int{}}
	issues, err := h.Store.IssuesWithFile(HooksDir)
	if err != nil {
		skipped = append(skipped, err)
	}
	for _, n := range issues {
		m := ledger.AgentStatuses{}
		if err := h.Store.ReadState(HooksFile(n), &m); err != nil {
			skipped = append(skipped, err)
			continue
		}
		for agent, s := range m {
			if s != nil {
				issue := n
				s.Issue = &issue
				st.set(agentKey{agent, n}, 0, s)
			}
		}
	}
	for _, n := range ix.OpenIssues() {
		for _, e := range ix.Issues[n] {
			st.open(n, e)
		}
	}
	out := make([]AgentState, 0, len(st.rows))
	for k, s := range st.rows {
		out = append(out, AgentState{Agent: k.agent, AgentStatus: s})
	}
	sortStates(out)
	return out, skipped, nil
}

// agentKey is an agent on an issue.
type agentKey struct {
	agent string
	issue int
}

// agentRows are AgentStates' rows as it finds them, each with its rank:
// 3 blocked, 2 clarifying, 1 answered, 0 hook.
type agentRows struct {
	rows map[agentKey]*ledger.AgentStatus
	rank map[agentKey]int
}

// wins says whether a status of rank r would be k's.
func (a *agentRows) wins(k agentKey, r int) bool {
	if k.agent == ledger.Human || k.agent == HubAgent {
		return false
	}
	cur, ok := a.rank[k]
	return !ok || cur < r
}

func (a *agentRows) set(k agentKey, r int, st *ledger.AgentStatus) {
	if a.wins(k, r) {
		a.rank[k], a.rows[k] = r, st
	}
}

// open takes in e, an open question of issue n: the statuses of its
// asker and its target it makes, each only where it wins (an issue with
// 2,000 open questions has few agents, and most lose to one before).
func (a *agentRows) open(n int, e ledger.IndexEntry) {
	from, to := agentKey{e.From, n}, agentKey{e.To, n}
	if b, ok := BlockerOf(e); ok && a.wins(from, 3) {
		issue, at := n, e.Asked
		a.set(from, 3, &ledger.AgentStatus{Status: ledger.BlockedClarification, Issue: &issue, LastActivity: &at, ClarificationID: e.ID, WaitingOn: b.On})
	} else if !ok && e.Status == ledger.Answered && a.wins(from, 1) {
		issue, at := n, e.Asked
		a.set(from, 1, &ledger.AgentStatus{Status: ledger.Working, Issue: &issue, LastActivity: &at})
	}
	if (e.Status == ledger.Pending || e.Status == ledger.Stale) && a.wins(to, 2) {
		issue, at := n, e.Asked
		a.set(to, 2, &ledger.AgentStatus{Status: ledger.Clarifying, Issue: &issue, LastActivity: &at, ClarificationID: e.ID, RespondingTo: e.From})
	}
}

// StateRows is what agentx state shows: every agent's status on every
// issue it is busy with (AgentStates), and each agent that
// agent-status.json holds and no row names, as the file has it: the file
// keeps an agent once its questions closed and its hooks said nothing more
// (an asker back to working, a responder idle), and an entry another
// AgentX tool wrote. So state shows every agent the file does. A file that
// cannot be read is a skipped error; the derived rows are still shown.
func (h *Hub) StateRows() ([]AgentState, []error, error) {
	rows, skipped, err := h.AgentStates()
	if err != nil {
		return nil, nil, err
	}
	file, err := h.Store.ReadAgents()
	if err != nil {
		return rows, append(skipped, err), nil
	}
	named := map[string]bool{}
	for _, r := range rows {
		named[r.Agent] = true
	}
	for name, st := range file {
		if named[name] || st == nil || name == ledger.Human || name == HubAgent {
			continue
		}
		kept := *st
		rows = append(rows, AgentState{Agent: name, AgentStatus: &kept, FromFile: true})
	}
	sortStates(rows)
	return rows, skipped, nil
}

// sortStates orders rows by agent, then issue (a row without one first).
func sortStates(rows []AgentState) {
	issue := func(r AgentState) int {
		if r.AgentStatus == nil || r.Issue == nil {
			return -1
		}
		return *r.Issue
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Agent != rows[j].Agent {
			return rows[i].Agent < rows[j].Agent
		}
		return issue(rows[i]) < issue(rows[j])
	})
}

// Notifier is the notify command, when one is configured and trusted to
// run on this machine (h.Trust); nil otherwise.
func (h *Hub) Notifier() *workflow.NotifyConfig {
	n := h.Rules().Config.Notify
	if n == nil || len(n.Command) == 0 || !h.Trust.Allow(trust.Notify(n.Command)) {
		return nil
	}
	return n
}

// notify runs the configured notify command, if any, for a question to a
// human ("question"), an escalation ("escalation") or an answer ("answer").
func (h *Hub) notify(ctx context.Context, kind string, rec Record) {
	n := h.Notifier()
	if n == nil {
		return
	}
	payload := struct {
		Kind string `json:"kind"`
		Record
	}{kind, rec}
	if err := Notify(ctx, n.Command, h.Dir, payload, n.Timeout.Duration); err != nil {
		h.Warn(fmt.Errorf("notify: %w", err))
	}
}
