package ghmirror

import (
	"context"

	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/ledger"
)

// PushReport is what one outbound run did.
type PushReport = relay.PushReport[IssueReport]

// Push mirrors what changed: it reads the event log from where the outbox
// left it, queues each issue a change touched, and syncs the queued
// issues that are due (SyncIssue), oldest issue number first, until ctx
// ends (relay.Outbox.Run: backoff, rate limits, ErrBusy unless force).
// only adds issues to the queue whatever changed.
//
// The first Push in a workspace starts at the end of the event log and
// queues the issues that have open clarifications; older history is
// mirrored by hand (agentx github sync --issue N).
func (m *Mirror) Push(ctx context.Context, force bool, only ...int) (PushReport, error) {
	var ob Outbox
	return relay.Push(ctx, m.outbox(), m.now(), &ob, &ob.Queue, force, only, func(ctx context.Context, n int) (IssueReport, error) {
		if ob.Labels == nil {
			ob.Labels = map[string][]string{}
		}
		ir, err := m.SyncIssue(ctx, n, ob.Labels[issueKey(n)])
		if len(ir.Labels) > 0 {
			ob.Labels[issueKey(n)] = ir.Labels
		} else {
			delete(ob.Labels, issueKey(n))
		}
		if m.Client.Rate.Limit > 0 {
			ob.Rate = &Rate{Limit: m.Client.Rate.Limit, Remaining: m.Client.Rate.Remaining, Reset: ledger.T(m.Client.Rate.Reset.Time)}
		}
		if err != nil {
			ir.Error = err.Error()
		}
		return ir, err
	})
}
