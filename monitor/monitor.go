package monitor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// Monitor runs the detectors over a workspace's open clarifications and
// acts on the findings through the hub.
type Monitor struct {
	Hub    *router.Hub
	Config Config
	DryRun bool // find, but change nothing (not even the index)
	// Budget bounds the time one run spends making retries (running
	// responders and notify commands), so that the command it runs in is
	// not held up for long: each retry runs at most what is left of it
	// (and at most its own timeout), a retry it cuts off is given back,
	// and one it has no time left for is left (Deferred) for the next
	// command. 0: no budget, each retry runs up to its timeout.
	Budget time.Duration
	// SkipQuiet skips the scan when the last one that found nothing to do
	// (QuietFile) saw the ledgers, the index and the settings as they are,
	// and nothing has fallen due since: the side monitor of a command
	// then costs two stats and a small read. Not for a run after a hook
	// (whether an agent abandoned its questions is news each time).
	SkipQuiet bool
}

// DefaultBudget is the budget of a monitor run as a side effect of a
// command (see Monitor.Budget).
const DefaultBudget = 10 * time.Second

// minRetryRun is the least time left of its budget a run starts a retry
// with: less would only start a responder to kill it.
const minRetryRun = time.Second

// New returns a monitor over the hub, configured from its workspace, with
// the budget of a side effect (DefaultBudget).
func New(h *router.Hub) *Monitor {
	return &Monitor{Hub: h, Config: ConfigFrom(h.Rules().Config, h.CanRetry), Budget: DefaultBudget}
}

// Problem is something the monitor could not look at or act on, with the
// file it concerns when there is one (a corrupt ledger).
type Problem struct {
	File    string `json:"file,omitempty"`
	Message string `json:"message"`
}

// Waiting is a stale clarification that has had its retry and is waiting
// for an answer until it escalates.
type Waiting struct {
	ID          string      `json:"id"`
	Issue       int         `json:"issue"`
	From        string      `json:"from"`
	To          string      `json:"to"`
	StaleSince  ledger.Time `json:"staleSince"`
	EscalatesAt ledger.Time `json:"escalatesAt"`
	Retries     int         `json:"retries"`
}

// Report is what one monitor run found and did.
type Report struct {
	Now      ledger.Time `json:"now"`
	DryRun   bool        `json:"dryRun,omitempty"`
	Open     int         `json:"open"`            // open clarifications looked at
	Index    string      `json:"index,omitempty"` // what was done to the index, if anything
	Findings []Finding   `json:"findings"`
	Waiting  []Waiting   `json:"waiting,omitempty"`
	Problems []Problem   `json:"problems,omitempty"`
}

// Quiet reports whether the run has nothing to tell a command's user: no
// finding it acted on (or failed to), no problems, no index repair.
func (r *Report) Quiet() bool {
	return len(r.Acted()) == 0 && len(r.Problems) == 0 && r.Index == ""
}

// Acted returns the findings other than those skipped because the re-check
// under the lock found them already handled (by another process).
func (r *Report) Acted() []Finding {
	out := []Finding{}
	for _, f := range r.Findings {
		if f.Result != Skipped {
			out = append(out, f)
		}
	}
	return out
}

func problem(err error) Problem {
	var ce *ledger.CorruptError
	if errors.As(err, &ce) {
		return Problem{File: ce.Path, Message: err.Error()}
	}
	return Problem{Message: err.Error()}
}

// load returns the open clarifications (ledger.Store.LoadOpen; in a dry
// run the index as it is, or a scan, which writes nothing).
func (m *Monitor) load(ctx context.Context, r *Report) []ledger.IndexEntry {
	s := m.Hub.Store
	var ix *ledger.Index
	var skipped []error
	var err error
	if m.DryRun {
		ix, skipped, err = s.ReadIndex()
		var unusable *ledger.IndexUnusableError
		if errors.As(err, &unusable) {
			r.Index = "not built: scanned the ledgers"
			ix, skipped, err = s.BuildIndex()
		}
	} else {
		var rebuilt bool
		ix, rebuilt, skipped, err = s.LoadOpen(ctx)
		if rebuilt && len(ix.Issues) > 0 { // a new workspace's first index is no news
			r.Index = "built from the ledgers"
		}
	}
	if err != nil {
		r.Problems = append(r.Problems, problem(err))
		return nil
	}
	for _, e := range skipped {
		r.Problems = append(r.Problems, problem(e))
	}
	m.logForeign(r, ix.Foreign)
	return ix.Entries()
}

// logForeign logs the events of what another AgentX tool wrote, found by
// this run's read (ledger.Index.Foreign), so that the inbox delivers it
// and the channels mirror it.
func (m *Monitor) logForeign(r *Report, changes []ledger.ForeignChange) {
	for _, e := range router.ForeignEvents(changes, m.Hub.Store.Now()) {
		if err := m.Hub.Events.Append(e); err != nil {
			r.Problems = append(r.Problems, problem(fmt.Errorf("event log: %w", err)))
			return
		}
	}
}

// Run looks at every open clarification once and acts on what it finds:
// after hook, if given, abandoned questions too. Problems (a corrupt
// ledger, a lock that timed out) are reported in the report and the rest
// still runs; only a cancelled ctx stops it early.
func (m *Monitor) Run(ctx context.Context, hook *Hook) *Report {
	var end time.Time // the end of the budget for retries
	if m.Budget > 0 {
		end = time.Now().Add(m.Budget)
	}
	now := m.Hub.Store.Now()
	r := &Report{Now: ledger.T(now), DryRun: m.DryRun}
	var v sight
	seen := false
	var dg *digest
	if m.SkipQuiet && hook == nil && !m.DryRun {
		if v, seen = m.look(); seen && m.quiet(v, now) {
			return r
		}
		// A side run looks only at the issues that changed or fell due
		// since one found nothing to do there (DigestFile).
		rules := v.rules // the settings as the quiet check saw them
		if !seen {
			rules = m.rules()
		}
		dg = m.openDigest(now, rules)
	}
	var entries []ledger.IndexEntry
	if dg != nil {
		entries = dg.load(r)
	} else {
		entries = m.load(ctx, r)
	}
	r.Open = len(entries)
	r.Findings = append([]Finding{}, Detect(entries, now, m.Config, hook)...)
	for i := 0; i < len(r.Findings); {
		j := i + 1 // a run of findings on one issue: their moves are one write
		for j < len(r.Findings) && r.Findings[j].Issue == r.Findings[i].Issue {
			j++
		}
		m.act(ctx, r.Findings[i:j], hook, end)
		i = j
	}
	r.Waiting = waiting(entries, r.Findings, now, m.Config)
	if dg != nil {
		dg.save(entries, r.Findings)
	}
	if seen && len(r.Findings) == 0 && r.Quiet() {
		var also time.Time
		if dg != nil {
			also = dg.coldDue()
		}
		m.noteQuiet(v, entries, now, also)
	}
	return r
}

// waiting lists the stale clarifications no finding touched: retried (or
// not retryable), waiting until they escalate.
func waiting(entries []ledger.IndexEntry, fs []Finding, now time.Time, cfg Config) []Waiting {
	var out []Waiting
	for _, e := range entries {
		if e.Status != ledger.Stale || slices.ContainsFunc(fs, func(f Finding) bool { return f.ID == e.ID }) {
			continue
		}
		if _, due := CheckStale(e, now, cfg); due {
			continue
		}
		w := Waiting{ID: e.ID, Issue: e.Issue, From: e.From, To: e.To, StaleSince: ledger.T(StaleSince(e)), EscalatesAt: ledger.T(EscalatesAt(e))}
		if e.Monitor != nil {
			w.Retries = e.Monitor.Retries
		}
		out = append(out, w)
	}
	return out
}

// moveOf is the status a finding's action moves its clarification to
// (false for a retry, which moves nothing itself).
func moveOf(a Action) (ledger.Status, bool) {
	switch a {
	case ActMarkStale:
		return ledger.Stale, true
	case ActEscalate:
		return ledger.Escalated, true
	case ActAbandon:
		return ledger.Abandoned, true
	case ActResolve:
		return ledger.Resolved, true
	}
	return "", false
}

// act carries out findings on one issue and records how each went (in a
// dry run, only that it is planned). Their moves are made in one ledger
// update (router.Hub.Apply); then, one at a time, the retries, which run a
// responder or a notify command, and so are not made under the lock.
func (m *Monitor) act(ctx context.Context, fs []Finding, hook *Hook, end time.Time) {
	if err := ctx.Err(); m.DryRun || err != nil {
		for i := range fs {
			if m.DryRun {
				fs[i].Result = Planned
			} else {
				fs[i].Result, fs[i].Error = Failed, err.Error()
			}
		}
		return
	}
	var mvs []router.Move
	for _, f := range fs {
		if to, ok := moveOf(f.Action); ok {
			mvs = append(mvs, router.Move{ID: f.ID, To: to, Reason: f.Reason, Guard: m.guard(f, hook)})
		}
	}
	var made []router.Moved
	if len(mvs) > 0 {
		made = m.Hub.Apply(ctx, fs[0].Issue, mvs)
	}
	for i := range fs {
		f := &fs[i]
		if f.Action == ActRetry {
			m.retry(ctx, f, false, end)
			continue
		}
		if _, ok := moveOf(f.Action); !ok {
			m.record(ctx, f, fmt.Errorf("unknown action %q", f.Action))
			continue
		}
		mv := made[0]
		made = made[1:]
		if mv.Err == nil {
			switch f.Action {
			case ActMarkStale:
				f.Detail = "marked stale"
				if f.Retry {
					m.retry(ctx, f, true, end)
					continue
				}
				f.Detail += fmt.Sprintf("; no retry is possible (%s)", noRetry(mv.To))
			case ActEscalate:
				f.Detail = "escalated to a human"
			case ActAbandon:
				f.Detail = "abandoned"
			case ActResolve:
				f.Detail = "resolved with its last answer"
			}
		}
		m.record(ctx, f, mv.Err)
	}
}

func noRetry(to string) string {
	if to == ledger.Human {
		return "no notify command is configured"
	}
	return to + " has no responder configured"
}

// record sets the result of a finding from the error of its action.
func (m *Monitor) record(ctx context.Context, f *Finding, err error) {
	var skip *router.SkippedError
	switch {
	case err == nil:
		f.Result = Done
	case errors.As(err, &skip):
		f.Result, f.Detail = Skipped, joinDetail(f.Detail, "no longer applies: "+skip.Reason)
		// Usually another monitor got there first and the index already
		// says so; if the index was behind the ledger, this heals it.
		if healed, err := m.Hub.Store.SyncIndex(ctx, f.Issue); err != nil {
			f.Detail = joinDetail(f.Detail, "could not bring the index in step: "+err.Error())
		} else if healed {
			f.Detail = joinDetail(f.Detail, "the index was behind the ledger and was brought in step")
		}
	default:
		f.Result, f.Error = Failed, err.Error()
		f.File = problem(err).File
	}
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// retry claims the clarification's automatic retry under the lock (the
// stale retry, or a failed responder's scheduled one), then (without the
// lock) runs it, within what is left of the budget (end; zero: none).
// After this run marked it stale (marked), a claim another monitor made
// first leaves the finding done.
func (m *Monitor) retry(ctx context.Context, f *Finding, marked bool, end time.Time) {
	h := m.Hub
	bound := h.RetryBound(f.To)
	if !end.IsZero() {
		left := time.Until(end)
		if left < minRetryRun {
			f.Result = Deferred
			f.Detail = joinDetail(f.Detail, fmt.Sprintf("the retry is left for the next command: this one's %s for retries is spent", m.Budget))
			return
		}
		bound = min(bound, left)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, end)
		defer cancel()
	}
	due := func(e ledger.IndexEntry, now time.Time) bool {
		g, ok := CheckStale(e, now, m.Config)
		return ok && g.Action == ActRetry
	}
	rec, err := h.ClaimRetry(ctx, f.ID, router.ClaimUntil(h.Store.Now(), bound), router.RetryGuard(due))
	var skip *router.SkippedError
	if marked && errors.As(err, &skip) {
		f.Result, f.Detail = Done, f.Detail+"; another monitor made the retry"
		return
	}
	if err != nil {
		m.record(ctx, f, err)
		return
	}
	res, err := h.Retry(ctx, rec)
	via := "re-ran the " + rec.To + " responder"
	if res.Via == "notify" {
		via = "re-sent the notification"
	}
	switch {
	case res.CutOff:
		f.Result = Deferred
		f.Detail = joinDetail(f.Detail, fmt.Sprintf("%s: it did not finish within this command's %s for retries; the retry is left for the next command", via, m.Budget))
		if err != nil {
			f.Error = err.Error()
		}
	case err != nil:
		// The retry was made and failed: the clarification stays stale
		// and escalates one SLA later. The finding itself went through.
		f.Result = Done
		f.Detail = joinDetail(f.Detail, fmt.Sprintf("%s: it failed (%v); it stays stale and escalates at %s",
			via, err, clock(EscalatesAt(ledger.EntryOf(rec.IssueNumber, rec.Clarification)))))
	default:
		f.Result = Done
		f.Detail = joinDetail(f.Detail, via+": "+res.Detail)
	}
}

// guard is the re-check of a finding under the ledger's lock: the same
// detector, run again on the ledger as it is now (and, for a deadlock, on
// the other ledgers of its cycle as they are now), must still reach the
// same decision about the same clarification.
func (m *Monitor) guard(f Finding, hook *Hook) router.Guard {
	return func(l *ledger.Ledger, c *ledger.Clarification, now time.Time) string {
		e := ledger.EntryOf(l.IssueNumber, c)
		var again []Finding
		switch f.Kind {
		case KindStale, KindResponderFailed:
			if g, ok := CheckStale(e, now, m.Config); ok {
				again = []Finding{g}
			}
		case KindAbandoned:
			if hook != nil {
				again = DetectAbandoned([]ledger.IndexEntry{e}, *hook)
			}
		case KindStuck:
			again = DetectStuck(ledger.EntriesOf(l), m.Config)
		case KindDeadlock:
			again = DetectDeadlocks(m.cycleEntries(l, f), m.Config)
		}
		for _, g := range again {
			if g.ID == f.ID && g.Action == f.Action {
				return ""
			}
		}
		return fmt.Sprintf("%s is %s now; the %s condition no longer holds", c.ID, c.Status, f.Kind)
	}
}

// cycleEntries is the open clarifications of l and, when the deadlock
// spans issues, of the other issues in it (read without their locks: only
// l's lock is held, so those may change after this read).
func (m *Monitor) cycleEntries(l *ledger.Ledger, f Finding) []ledger.IndexEntry {
	entries := ledger.EntriesOf(l)
	if m.Config.Scope != workflow.ScopeGlobal {
		return entries
	}
	seen := map[int]bool{l.IssueNumber: true}
	for _, id := range f.Related {
		n, _, err := ledger.ParseID(id)
		if err != nil || seen[n] {
			continue
		}
		seen[n] = true
		if other, err := m.Hub.Store.Read(n); err == nil {
			entries = append(entries, ledger.EntriesOf(other)...)
		}
	}
	return entries
}
