package relay

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// Queue is what a mode still owes its service, and where it got to. A
// mode's outbox file embeds it, beside what the mode keeps of its own.
type Queue struct {
	// Offset is how far the event log has been read: every change before
	// it is mirrored or queued in Issues.
	Offset int64 `json:"offset"`
	// Issues are the issues whose mirror is behind, by number.
	Issues map[string]*Behind `json:"issues,omitempty"`
	// WaitUntil is when the service allows calls again after a rate limit.
	WaitUntil *ledger.Time `json:"waitUntil,omitempty"`
	Updated   *ledger.Time `json:"updated,omitempty"`
}

// Behind is one issue whose mirror is behind.
type Behind struct {
	Since    ledger.Time  `json:"since"`              // queued since
	Attempts int          `json:"attempts,omitempty"` // failed syncs so far
	RetryAt  *ledger.Time `json:"retryAt,omitempty"`  // not before
	Error    string       `json:"error,omitempty"`    // why the last sync failed
}

// Backoff is how long a failed issue waits before it is tried again:
// 30 s, doubling, at most 30 minutes.
func Backoff(attempts int) time.Duration {
	d := 30 * time.Second
	for i := 1; i < attempts && d < 30*time.Minute; i++ {
		d *= 2
	}
	return min(d, 30*time.Minute)
}

// Due reports whether a queued issue may be tried at now.
func (b *Behind) Due(now time.Time) bool {
	return b.RetryAt == nil || !b.RetryAt.After(now)
}

// IssueKey is an issue number as a JSON object key.
func IssueKey(n int) string { return strconv.Itoa(n) }

// Sorted are the issue numbers of a queue, ascending.
func Sorted(q map[string]*Behind) []int {
	out := []int{}
	for k := range q {
		if n, err := strconv.Atoi(k); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// PushReport is what one outbound run did, T being what syncing one issue
// did.
type PushReport[T any] struct {
	Issues  []T    `json:"issues"`            // the issues synced (or tried)
	Behind  []int  `json:"behind"`            // issues whose mirror is still behind
	Skipped string `json:"skipped,omitempty"` // why nothing was sent, if nothing was
}

// Push is Run, unless the outbox is idle (and neither force nor only ask
// for a run), reported: sync returns what syncing one issue did, kept in
// the report.
func Push[T any](ctx context.Context, o *Outbox, now time.Time, v any, q *Queue, force bool, only []int, sync func(ctx context.Context, n int) (T, error)) (PushReport[T], error) {
	rep := PushReport[T]{Behind: []int{}, Issues: []T{}}
	if !force && len(only) == 0 && o.Idle(now) {
		return rep, nil
	}
	skipped, err := o.Run(ctx, now, v, q, force, only, func(ctx context.Context, n int) error {
		r, err := sync(ctx, n)
		rep.Issues = append(rep.Issues, r)
		return err
	})
	rep.Skipped = skipped
	rep.Behind = Sorted(q.Issues)
	return rep, err
}

// Later is the later of two times, either of which may be nil.
func Later(a, b *ledger.Time) *ledger.Time {
	if a == nil || (b != nil && b.After(a.Time)) {
		return b
	}
	return a
}

// Outbox feeds a mode's queue from the event log and works it off.
type Outbox struct {
	File   File
	Store  *ledger.Store
	Events router.EventLog
	// Service names the service in what Run reports ("GitHub").
	Service string
	// NoIssue is whether issue 0, which holds the questions of no issue,
	// is mirrored too (a chat channel has room for them; an issue
	// tracker does not).
	NoIssue bool
	// Start lists the issues the first run in a workspace queues (nil: the
	// issues with open clarifications); older history is the mode's own
	// business.
	Start func() ([]int, error)
	// Hold is the service's rate limit, shared with its other calls (nil:
	// none): an unforced run sends nothing while it holds.
	Hold *Hold
}

// Idle reports, without a lock, whether Run has nothing to do: every
// change in the event log was seen and no queued issue is due.
func (o *Outbox) Idle(now time.Time) bool {
	var q Queue
	if err := o.File.Read(&q); err != nil || q.Updated == nil {
		return false // unreadable: let Run report it; absent: Run starts the queue
	}
	size, err := o.Events.Size()
	if err != nil || size != q.Offset {
		return false
	}
	if q.WaitUntil != nil && q.WaitUntil.After(now) || o.Hold.Held(o.Service, now) != "" {
		return true
	}
	for _, b := range q.Issues {
		if b.Due(now) {
			return false
		}
	}
	return true
}

// Run reads the event log from where q left it, queues each issue a
// change touched (issue 0 only with NoIssue), and syncs the queued issues that are due, oldest issue number
// first, until ctx ends, all under the outbox file's lock. v is the whole
// outbox file, q its queue. An issue sync fails stays queued with the
// error and a retry time (Backoff; a Waiter holds every call until it
// lifts). force tries every queued issue now and waits for another
// process doing the same; otherwise a busy outbox is left to its holder
// (ErrBusy). only adds issues to the queue whatever changed. skipped says
// why nothing was sent, when a rate limit held it all.
//
// The first Run in a workspace starts at the end of the event log and
// queues Start's issues.
func (o *Outbox) Run(ctx context.Context, now time.Time, v any, q *Queue, force bool, only []int, sync func(ctx context.Context, n int) error) (skipped string, err error) {
	r := &outboxRun{o: o, now: now, q: q, force: force}
	err = o.File.Update(ctx, v, force, func() error {
		if err := r.collect(only); err != nil {
			return err
		}
		if why := r.held(); why != "" {
			skipped = why
			return nil
		}
		q.WaitUntil = nil
		return r.syncDue(ctx, sync)
	})
	return skipped, err
}

// outboxRun is one Run of an outbox at now over its queue q.
type outboxRun struct {
	o     *Outbox
	now   time.Time
	q     *Queue
	force bool
}

// queue adds issue n to the queue unless it is there already (issue 0
// only with NoIssue).
func (r *outboxRun) queue(n int) {
	if n < 0 || (n == 0 && !r.o.NoIssue) {
		return
	}
	if _, ok := r.q.Issues[IssueKey(n)]; !ok {
		r.q.Issues[IssueKey(n)] = &Behind{Since: ledger.T(r.now)}
	}
}

// collect queues what changed since the last run (Start's issues on the
// first), then only, and marks the queue updated.
func (r *outboxRun) collect(only []int) error {
	if r.q.Issues == nil {
		r.q.Issues = map[string]*Behind{}
	}
	if r.q.Updated == nil {
		if err := r.start(); err != nil {
			return err
		}
	}
	if err := r.readEvents(); err != nil {
		return err
	}
	for _, n := range only {
		r.queue(n)
	}
	t := ledger.T(r.now)
	r.q.Updated = &t
	return nil
}

// start begins the first run in a workspace at the end of the event log
// and queues Start's issues.
func (r *outboxRun) start() error {
	size, err := r.o.Events.Size()
	if err != nil {
		return err
	}
	r.q.Offset = size
	start := r.o.Start
	if start == nil {
		start = func() ([]int, error) { return r.o.Store.IssuesWithFile(ledger.IndexDir) }
	}
	open, err := start()
	if err != nil {
		return err
	}
	for _, n := range open {
		r.queue(n)
	}
	return nil
}

// readEvents queues the issues of each change in the event log from the
// queue's offset on, and moves the offset past what was read.
func (r *outboxRun) readEvents() error {
	if size, err := r.o.Events.Size(); err == nil && size < r.q.Offset {
		r.q.Offset = 0 // the log was replaced: read it again (what is mirrored stays mirrored)
	}
	next, err := r.o.Events.ReadFrom(r.q.Offset, func(l router.Line) error {
		// A change pulled from the shared remote is mirrored by the
		// host that made it; a refusal changed nothing.
		if e, ok := l.Decode(); ok && !e.Pulled() && !e.Refusal() {
			r.queue(e.IssueNumber)
			for _, n := range e.Issues { // a proposal's
				r.queue(n)
			}
		}
		return nil
	})
	r.q.Offset = next
	return err
}

// held says why an unforced run sends nothing now (a rate limit the
// queue or the Hold keeps), or "".
func (r *outboxRun) held() string {
	if r.q.WaitUntil != nil && r.q.WaitUntil.After(r.now) && !r.force {
		return r.o.Service + " rate limit: not before " + r.q.WaitUntil.UTC().Format(time.RFC3339)
	}
	if why := r.o.Hold.Held(r.o.Service, r.now); why != "" && !r.force {
		return why
	}
	return ""
}

// syncDue syncs the queued issues that are due (every one when forced),
// oldest issue number first, until ctx ends or a rate limit or deadline
// stops the run; it returns the first failure.
func (r *outboxRun) syncDue(ctx context.Context, sync func(ctx context.Context, n int) error) error {
	// In remote mode, an issue with changes still in the remote's
	// outbox waits: they may yet be renumbered or superseded, and the
	// host whose push wins mirrors each change once.
	unshared, _ := remote.OutboxIssues(r.o.Store)
	var firstErr error
	for _, n := range Sorted(r.q.Issues) {
		b := r.q.Issues[IssueKey(n)]
		if (!r.force && !b.Due(r.now)) || ctx.Err() != nil {
			continue
		}
		if slices.Contains(unshared, n) {
			b.Error = "waiting until its changes are on the shared remote (agentx sync)"
			continue
		}
		err := sync(ctx, n)
		if err == nil {
			delete(r.q.Issues, IssueKey(n))
			continue
		}
		r.failed(b, err)
		if firstErr == nil {
			firstErr = err
		}
		if r.q.WaitUntil != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			break
		}
	}
	return firstErr
}

// failed records a failed sync of b: its error and a retry time (Backoff,
// or when err is a Waiter the time it holds every call until).
func (r *outboxRun) failed(b *Behind, err error) {
	b.Attempts++
	b.Error = err.Error()
	retry := ledger.T(r.now.Add(Backoff(b.Attempts)))
	if until, ok := WaitOf(err); ok {
		u := ledger.T(until)
		r.q.WaitUntil, retry = &u, u
	}
	b.RetryAt = &retry
}

// BehindIssue is one queued issue, as a status shows it.
type BehindIssue struct {
	Issue      int          `json:"issue"`
	Since      ledger.Time  `json:"since"`
	Attempts   int          `json:"attempts"`
	RetryAt    *ledger.Time `json:"retryAt,omitempty"`
	Error      string       `json:"error,omitempty"`
	Unmirrored int          `json:"unmirrored"` // thread entries not on the service yet
}

// Status is the queue as a status shows it, from the local files only:
// q's issues and those of the changes in the event log no run has read
// yet, in order, with unmirrored(c) the entries of clarification c not
// sent yet; eventsBehind is the bytes of the log no run has read.
func (o *Outbox) Status(q Queue, unmirrored func(c *ledger.Clarification) int) (eventsBehind int64, behind []BehindIssue, err error) {
	size, err := o.Events.Size()
	if err != nil {
		return 0, nil, err
	}
	issues := map[string]*Behind{}
	for k, b := range q.Issues {
		issues[k] = b
	}
	if q.Updated != nil && size > q.Offset {
		eventsBehind = size - q.Offset
		_, _ = o.Events.ReadFrom(q.Offset, func(l router.Line) error {
			if e, ok := l.Decode(); ok && !e.Pulled() && !e.Refusal() && (e.IssueNumber > 0 || o.NoIssue && e.IssueNumber == 0) && issues[IssueKey(e.IssueNumber)] == nil {
				issues[IssueKey(e.IssueNumber)] = &Behind{Since: e.Timestamp}
			}
			return nil
		})
	}
	behind = []BehindIssue{}
	for _, n := range Sorted(issues) {
		b := issues[IssueKey(n)]
		bi := BehindIssue{Issue: n, Since: b.Since, Attempts: b.Attempts, RetryAt: b.RetryAt, Error: b.Error}
		if l, err := o.Store.Read(n); err == nil {
			for _, c := range l.Clarifications {
				bi.Unmirrored += unmirrored(c)
			}
		}
		behind = append(behind, bi)
	}
	return eventsBehind, behind, nil
}
