package router

import (
	"fmt"
	"time"

	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
)

// CancelledReason is the reason a cancelled question is abandoned with
// (Cancel): its thread ends with "Abandoned: cancelled".
const CancelledReason = ledger.CancelledReason

// RunStart is when agent's current run on issue began: its last hook on
// the issue (a `hook start`, or a `hook finish` after which it went on),
// from the issue's hook record. nil when the agent never ran a hook there:
// then its every question on the issue is of one run.
func (h *Hub) RunStart(issue int, agent string) (*time.Time, error) {
	m := ledger.AgentStatuses{}
	if err := h.Store.ReadState(HooksFile(issue), &m); err != nil {
		return nil, fmt.Errorf("question cap: %w", err)
	}
	if st := m[agent]; st != nil && st.LastActivity != nil {
		t := st.LastActivity.Time
		return &t, nil
	}
	return nil, nil
}

// capError is the refusal of a question past max_questions: it says what
// the cap counts (a session, a run, the issue) and when it resets.
func capError(req AskRequest, n, maxQ int, run *time.Time) *RuleError {
	since, in, resets := words.OnIssue(req.Issue), "run", "the next run on the issue (its next hook start) may ask again"
	switch {
	case run != nil && run == req.Session:
		since = fmt.Sprintf("in this session %s (since it began at %s)", words.OnIssue(req.Issue), run.UTC().Format(time.RFC3339))
		in, resets = "session", "a new session (or the next hook start on the issue) may ask again"
	case run != nil:
		since = fmt.Sprintf("in this run %s (since its hook start at %s)", words.OnIssue(req.Issue), run.UTC().Format(time.RFC3339))
	}
	return &RuleError{
		Kind: RuleCap,
		Msg: fmt.Sprintf("%s has asked %d %s %s, the limit (max_questions = %d): no more questions in this %s: proceed on your best judgment; %s",
			req.From, n, words.Plural(n, "question", "questions"), since, maxQ, in, resets),
		From: req.From, Issue: req.Issue, Asked: n, Max: maxQ, Session: in == "session",
	}
}
