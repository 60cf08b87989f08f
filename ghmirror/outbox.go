package ghmirror

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// PushReport is what one outbound run did.
type PushReport struct {
	Issues  []IssueReport `json:"issues"`            // the issues synced (or tried)
	Behind  []int         `json:"behind"`            // issues whose mirror is still behind
	Skipped string        `json:"skipped,omitempty"` // why nothing was sent, if nothing was
}

// backoff is how long a failed issue waits before it is tried again:
// 30 s, doubling, at most 30 minutes.
func backoff(attempts int) time.Duration {
	d := 30 * time.Second
	for i := 1; i < attempts && d < 30*time.Minute; i++ {
		d *= 2
	}
	return min(d, 30*time.Minute)
}

// due reports whether a queued issue may be tried at now.
func (b *Behind) due(now time.Time) bool {
	return b.RetryAt == nil || !b.RetryAt.After(now)
}

// idle reports, without a lock, whether Push has nothing to do: every
// change in the event log was seen and no queued issue is due.
func (m *Mirror) idle(now time.Time) bool {
	var ob Outbox
	if err := m.file(OutboxFile).read(&ob); err != nil || ob.Updated == nil {
		return false // unreadable: let Push report it; absent: Push starts the queue
	}
	size, err := m.Hub.Events.Size()
	if err != nil || size != ob.Offset {
		return false
	}
	if ob.WaitUntil != nil && ob.WaitUntil.After(now) {
		return true
	}
	for _, b := range ob.Issues {
		if b.due(now) {
			return false
		}
	}
	return true
}

// Push mirrors what changed: it reads the event log from where the outbox
// left it, queues each issue a change touched, and syncs the queued
// issues that are due (SyncIssue), oldest issue number first, until ctx
// ends. An issue that fails stays queued, with the error and a retry time
// (backoff; a rate limit holds every call until it lifts). force (agentx
// github sync) tries every queued issue now and waits for another process
// doing the same; otherwise a busy outbox is left to its holder
// (ErrBusy). only adds issues to the queue whatever changed.
//
// The first Push in a workspace starts at the end of the event log and
// queues the issues that have open clarifications; older history is
// mirrored by hand (agentx github sync --issue N).
func (m *Mirror) Push(ctx context.Context, force bool, only ...int) (PushReport, error) {
	rep := PushReport{Behind: []int{}, Issues: []IssueReport{}}
	now := m.now()
	if !force && len(only) == 0 && m.idle(now) {
		return rep, nil
	}
	var ob Outbox
	err := m.file(OutboxFile).update(ctx, &ob, force, func() error {
		if ob.Issues == nil {
			ob.Issues = map[string]*Behind{}
		}
		if ob.Labels == nil {
			ob.Labels = map[string][]string{}
		}
		queue := func(n int) {
			if n <= 0 { // issue 0 holds questions of no issue: nothing on GitHub
				return
			}
			if _, ok := ob.Issues[issueKey(n)]; !ok {
				ob.Issues[issueKey(n)] = &Behind{Since: ledger.T(now)}
			}
		}
		if ob.Updated == nil {
			size, err := m.Hub.Events.Size()
			if err != nil {
				return err
			}
			ob.Offset = size
			open, err := m.Hub.Store.IssuesWithFile(ledger.IndexDir)
			if err != nil {
				return err
			}
			for _, n := range open {
				queue(n)
			}
		}
		if size, err := m.Hub.Events.Size(); err == nil && size < ob.Offset {
			ob.Offset = 0 // the log was replaced: read it again (what is mirrored stays mirrored)
		}
		next, err := m.Hub.Events.ReadFrom(ob.Offset, func(l router.Line) error {
			if e, ok := l.Decode(); ok {
				queue(e.IssueNumber)
			}
			return nil
		})
		ob.Offset = next
		if err != nil {
			return err
		}
		for _, n := range only {
			queue(n)
		}
		t := ledger.T(now)
		ob.Updated = &t
		if ob.WaitUntil != nil && ob.WaitUntil.After(now) && !force {
			rep.Skipped = "GitHub rate limit: not before " + ob.WaitUntil.UTC().Format(time.RFC3339)
			return nil
		}
		ob.WaitUntil = nil
		var firstErr error
		for _, n := range sortedIssues(ob.Issues) {
			b := ob.Issues[issueKey(n)]
			if (!force && !b.due(now)) || ctx.Err() != nil {
				continue
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
			if err == nil {
				delete(ob.Issues, issueKey(n))
				rep.Issues = append(rep.Issues, ir)
				continue
			}
			ir.Error = err.Error()
			rep.Issues = append(rep.Issues, ir)
			b.Attempts++
			b.Error = err.Error()
			retry := ledger.T(now.Add(backoff(b.Attempts)))
			if until, ok := errWait(err); ok {
				u := ledger.T(until)
				ob.WaitUntil, retry = &u, u
			}
			b.RetryAt = &retry
			if firstErr == nil {
				firstErr = err
			}
			if ob.WaitUntil != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				break
			}
		}
		return firstErr
	})
	rep.Behind = sortedIssues(ob.Issues)
	return rep, err
}

// sortedIssues are the issue numbers of a queue, ascending.
func sortedIssues(q map[string]*Behind) []int {
	out := []int{}
	for k := range q {
		if n, err := strconv.Atoi(k); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
