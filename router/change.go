package router

import (
	"context"
	"fmt"
	"time"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// How the hub changes one clarification: every action (answer, resolve,
// escalate...) and every monitor action goes through change or changeIf,
// which make the change inside one ledger update, under the issue's lock.

// change applies fn to clarification id inside one ledger update and
// returns the record as written; with a Once in ctx (WithOnce), at most
// once.
func (h *Hub) change(ctx context.Context, id string, fn func(c *ledger.Clarification, now time.Time) error) (Record, error) {
	guard, fn := onceGuarded(ctx, fn)
	return h.changeIf(ctx, id, guard, fn)
}

// Guard re-checks a monitor decision under the ledger's lock: l is the
// whole ledger as read under the lock and c the clarification in it. It
// returns "" when the change should go ahead, else why it no longer applies.
type Guard func(l *ledger.Ledger, c *ledger.Clarification, now time.Time) string

// SkippedError is a guarded change that did not happen because its guard
// no longer held (typically: another process did it first). Nothing was
// written.
type SkippedError struct {
	ID     string
	Reason string
}

func (e *SkippedError) Error() string { return fmt.Sprintf("%s: skipped: %s", e.ID, e.Reason) }

// sla is how long a new question to target may stay pending: the step's
// clarify_sla_minutes for an agent, human_sla_minutes for a human.
func (h *Hub) sla(rule workflow.Rule, target string) time.Duration {
	if target == ledger.Human && h.Rules().Config.HumanSLAMinutes > 0 {
		return h.Rules().Config.HumanSLA()
	}
	return rule.SLA
}

// changeIf applies fn to clarification id inside one ledger update, if
// guard (run first, under the lock) allows it.
func (h *Hub) changeIf(ctx context.Context, id string, guard Guard, fn func(c *ledger.Clarification, now time.Time) error) (Record, error) {
	issue, _, err := ledger.ParseID(id)
	if err != nil {
		return Record{}, err
	}
	var rec Record
	_, err = h.Store.Update(ctx, issue, func(l *ledger.Ledger) error {
		c := l.Find(id)
		if c == nil {
			return fmt.Errorf("clarification %s: %w", id, ledger.ErrNotFound)
		}
		now := h.now()
		if guard != nil {
			if why := guard(l, c, now); why != "" {
				return &SkippedError{ID: id, Reason: why}
			}
		}
		if err := fn(c, now); err != nil {
			return err
		}
		rec = Record{IssueNumber: issue, Clarification: c}
		return nil
	})
	return rec, h.lockTimedOut(err, func() Event { return h.about(issue, id) })
}
