package monitor

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/textsim"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// Kind is the condition the monitor found.
type Kind string

// The conditions.
const (
	KindStale     Kind = "stale"     // pending past its SLA
	KindStuck     Kind = "stuck"     // the same question again, or bounced back
	KindDeadlock  Kind = "deadlock"  // blocking questions waiting on each other in a cycle
	KindAbandoned Kind = "abandoned" // the asker finished its issue and left it open
	// KindResponderFailed: the responder failed when asked, and the one
	// retry it was given (retry_delay later) is due.
	KindResponderFailed Kind = "responder-failed"
)

// Action is what the monitor does about a finding.
type Action string

// The actions.
const (
	ActMarkStale Action = "mark-stale" // pending → stale, then one retry when one is possible
	ActRetry     Action = "retry"      // run the responder again, or re-notify the human
	ActEscalate  Action = "escalate"   // hand it to a human
	ActAbandon   Action = "abandon"    // close it: nobody is waiting for the answer
	ActResolve   Action = "resolve"    // close it with its last answer
)

// Result is how an action went.
type Result string

// The results.
const (
	Planned Result = "planned" // --dry-run: found, not acted on
	Done    Result = "done"
	Skipped Result = "skipped" // the re-check under the lock found it no longer applies
	Failed  Result = "failed"
	// Deferred: a retry this run had no time left for (the command's
	// budget for retries), or that it cut off at the budget: nothing was
	// recorded, and the next command makes it.
	Deferred Result = "deferred"
)

// Finding is one clarification the monitor acts on, and how that went.
type Finding struct {
	Kind    Kind          `json:"kind"`
	Action  Action        `json:"action"`
	ID      string        `json:"id"`
	Issue   int           `json:"issue"`
	From    string        `json:"from"`
	To      string        `json:"to"`
	Status  ledger.Status `json:"status"` // when found
	Reason  string        `json:"reason"`
	Retry   bool          `json:"retry,omitempty"`   // mark-stale: an automatic retry follows
	Cycle   []string      `json:"cycle,omitempty"`   // deadlock: the agents, the escalated one's asker first
	Related []string      `json:"related,omitempty"` // the other clarifications involved

	Result Result `json:"result"`
	Detail string `json:"detail,omitempty"` // what happened
	Error  string `json:"error,omitempty"`
	File   string `json:"file,omitempty"` // the file an error is about
}

// Config is what the detectors need from config.toml.
type Config struct {
	Similarity float64                  // stuck_similarity
	Scope      string                   // deadlock_scope: workflow.ScopeIssue or ScopeGlobal
	Priority   []string                 // upstream precedence, most upstream first
	CanRetry   func(target string) bool // whether a question to target can be retried; nil: never
	// Judge, when set, is the time at which the stale rule judges an
	// entry seen at now, in place of now; zero: no time-based action on
	// it at all (remote mode's check of the clocks: remote.Judge.At).
	Judge func(e ledger.IndexEntry, now time.Time) time.Time
}

// ConfigFrom takes the detectors' settings from a workspace config.
func ConfigFrom(c *workflow.Config, canRetry func(string) bool) Config {
	return Config{Similarity: c.StuckSimilarity, Scope: c.DeadlockScope, Priority: c.Priority, CanRetry: canRetry}
}

func (c Config) canRetry(target string) bool { return c.CanRetry != nil && c.CanRetry(target) }

func (c Config) similarity() float64 {
	if c.Similarity <= 0 || c.Similarity > 1 {
		return workflow.DefaultStuckSimilarity
	}
	return c.Similarity
}

// Hook is the lifecycle event a monitor run follows, if any: Agent starts
// or finishes (Phase "start" or "finish") its work on Issue. The agent is
// Agent on Issue: the same role on another issue is another worker.
type Hook struct {
	Phase string
	Agent string
	Issue int
}

// The hook phases.
const (
	PhaseStart  = "start"
	PhaseFinish = "finish"
)

// DefaultSLA applies when an entry carries no usable SLA.
const DefaultSLA = ledger.DefaultSLA

func finding(k Kind, a Action, e ledger.IndexEntry, reason string) Finding {
	return Finding{Kind: k, Action: a, ID: e.ID, Issue: e.Issue, From: e.From, To: e.To, Status: e.Status, Reason: reason}
}

func clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

func seconds(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// SLA, StaleSince, Retried and EscalatesAt are the entry's (see
// ledger.IndexEntry), as functions for the detectors.
func SLA(e ledger.IndexEntry) time.Duration     { return e.SLA() }
func StaleSince(e ledger.IndexEntry) time.Time  { return e.StaleSince() }
func Retried(e ledger.IndexEntry) bool          { return e.Retried() }
func EscalatesAt(e ledger.IndexEntry) time.Time { return e.EscalatesAt() }

// CheckStale is the stale rule for one clarification at now, and the rule
// of a failed responder's retry, which comes first:
//
//   - its responder failed once in this round and its one retry is
//     scheduled (router.ScheduledRetry): retry it once it is due and
//     nobody is making it (router.RetryDue), as long as the question is
//     before its staleAfter (pending) or its escalation (stale); past
//     that, the stale rule has it, and the retry still owed is the stale
//     retry;
//   - pending past staleAfter: mark it stale, and retry once if a retry is
//     possible (the target has a responder, or the human a notify command);
//   - stale one SLA after it went stale: escalate;
//   - stale and not yet retried (a retry that was never made): retry.
//
// Anything else, and a clarification already acted on, gives ok false, so
// running the rule again changes nothing. With cfg.Judge the rule runs at
// the time it gives for e, and not at all when that is zero.
func CheckStale(e ledger.IndexEntry, now time.Time, cfg Config) (f Finding, ok bool) {
	if cfg.Judge != nil {
		if now = cfg.Judge(e, now); now.IsZero() {
			return f, false
		}
	}
	if at, scheduled := router.ScheduledRetry(e); scheduled && cfg.canRetry(e.To) && beforeDeadline(e, now) {
		if !router.RetryDue(e, now) {
			return f, false
		}
		m := e.Monitor
		failed := ""
		if m.FailedAt != nil {
			failed = " at " + seconds(m.FailedAt.Time)
		}
		return finding(KindResponderFailed, ActRetry, e, fmt.Sprintf("the responder failed%s (%s); its one retry was due at %s",
			failed, m.Failure, seconds(at))), true
	}
	switch e.Status {
	case ledger.Pending:
		if e.StaleAfter.IsZero() || !now.After(e.StaleAfter.Time) {
			return f, false
		}
		f = finding(KindStale, ActMarkStale, e, fmt.Sprintf("stale: no answer from %s within its SLA of %s (asked %s, stale after %s)",
			e.To, SLA(e), clock(e.Asked.Time), clock(e.StaleAfter.Time)))
		f.Retry = cfg.canRetry(e.To)
		return f, true
	case ledger.Stale:
		if at := EscalatesAt(e); !now.Before(at) {
			return finding(KindStale, ActEscalate, e, fmt.Sprintf("stale: still no answer from %s one SLA (%s) after it went stale at %s",
				e.To, SLA(e), clock(StaleSince(e)))), true
		}
		if !Retried(e) && cfg.canRetry(e.To) {
			return finding(KindStale, ActRetry, e, fmt.Sprintf("stale since %s and not yet retried", clock(StaleSince(e)))), true
		}
	}
	return f, false
}

// beforeDeadline reports whether e is still within the time the stale
// rule gives it: a pending question before its staleAfter, a stale one
// before its escalation.
func beforeDeadline(e ledger.IndexEntry, now time.Time) bool {
	if e.Status == ledger.Stale {
		return now.Before(EscalatesAt(e))
	}
	return !now.After(e.StaleAfter.Time)
}

// NextDue is when the stale rule (CheckStale) next has something to do
// about e, seen at now: now when it has already; else the earliest of its
// scheduled retry, the lapse of a claim on that retry, its staleAfter
// (pending) and its escalation (stale). Zero when e waits on nothing the
// monitor does (answered, escalated, or closed).
//
// With cfg.Judge, a question judged at a time of its own (remote mode:
// another host's, by what was fetched) falls due when that time has
// covered what the question has left, which is no sooner than this clock
// covers it; one held (no time-based action while the clocks disagree) is
// looked at again after judgedRecheck.
func NextDue(e ledger.IndexEntry, now time.Time, cfg Config) time.Time {
	if cfg.Judge != nil { // judged once: the rest runs at the judged time
		at := cfg.Judge(e, now)
		cfg.Judge = nil
		if at.IsZero() {
			if NextDue(e, now, cfg).IsZero() {
				return time.Time{}
			}
			return now.Add(judgedRecheck)
		}
		t := NextDue(e, at, cfg)
		if t.IsZero() {
			return t
		}
		return now.Add(t.Sub(at))
	}
	if _, ok := CheckStale(e, now, cfg); ok {
		return now
	}
	var next time.Time
	consider := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if at, ok := router.ScheduledRetry(e); ok && cfg.canRetry(e.To) {
		consider(at)
		if e.Monitor.RetryUntil != nil {
			consider(e.Monitor.RetryUntil.Time)
		}
	}
	switch e.Status {
	case ledger.Pending:
		consider(e.StaleAfter.Add(time.Millisecond)) // stale once past it
	case ledger.Stale:
		consider(EscalatesAt(e))
	}
	return next
}

// judgedRecheck is how soon NextDue looks again at a question the Judge
// holds (Config.Judge gave zero): when the clocks agree again is not a
// time the question says.
const judgedRecheck = time.Minute

// DetectStale applies CheckStale to every entry.
func DetectStale(entries []ledger.IndexEntry, now time.Time, cfg Config) []Finding {
	var out []Finding
	for _, e := range entries {
		if f, ok := CheckStale(e, now, cfg); ok {
			out = append(out, f)
		}
	}
	return out
}

// live reports whether a clarification is still being worked between its
// agents (not escalated: a human has it then).
func live(e ledger.IndexEntry) bool {
	return e.Status == ledger.Pending || e.Status == ledger.Answered || e.Status == ledger.Stale
}

// DetectStuck finds clarifications going round in circles, on one issue:
//
//   - the same question again: the current question shares at least
//     cfg.Similarity of its words (Jaccard similarity of the word sets) with
//     the previous round's question;
//   - the direction flipped: A asks B what B asked A (the current or the
//     previous question of B's live clarification to A). The newer of the
//     two is the one flagged.
//
// Each is escalated. Escalated, resolved and abandoned clarifications are
// never flagged.
func DetectStuck(entries []ledger.IndexEntry, cfg Config) []Finding {
	t := cfg.similarity()
	var out []Finding
	flagged := map[string]bool{}
	for _, e := range entries {
		if !live(e) || e.Round < 2 {
			continue
		}
		if s := textsim.Jaccard(e.Q, e.PrevQ); s >= t {
			out = append(out, finding(KindStuck, ActEscalate, e, fmt.Sprintf("stuck: round %d asks what round %d asked (%.0f%% of the words are the same)", e.Round, e.Round-1, 100*s)))
			flagged[e.ID] = true
		}
	}
	byIssue := map[int][]*ledger.IndexEntry{}
	var issues []int
	for i := range entries {
		if e := &entries[i]; live(*e) {
			if byIssue[e.Issue] == nil {
				issues = append(issues, e.Issue)
			}
			byIssue[e.Issue] = append(byIssue[e.Issue], e)
		}
	}
	for _, n := range issues {
		out = append(out, flips(byIssue[n], t, flagged)...)
	}
	return out
}

// flips finds, among one issue's live clarifications, a question bounced
// back: the newer of two opposite clarifications asking what the older one
// asked.
func flips(es []*ledger.IndexEntry, t float64, flagged map[string]bool) []Finding {
	// Only opposite directions are compared: the entries by direction, so
	// that many questions one way cost no pairs (the same pairs, in the
	// same order, as comparing each with every later one).
	byDir := map[[2]string][]int{}
	for i, e := range es {
		byDir[[2]string{e.From, e.To}] = append(byDir[[2]string{e.From, e.To}], i)
	}
	var out []Finding
	for i, x := range es {
		for _, j := range byDir[[2]string{x.To, x.From}] {
			if j <= i {
				continue
			}
			y := es[j]
			newer, older := x, y
			if older.Asked.After(newer.Asked.Time) || (older.Asked.Equal(newer.Asked.Time) && older.ID > newer.ID) {
				newer, older = older, newer
			}
			if flagged[newer.ID] {
				continue
			}
			s := max(textsim.Jaccard(newer.Q, older.Q), textsim.Jaccard(newer.Q, older.PrevQ))
			if s < t {
				continue
			}
			f := finding(KindStuck, ActEscalate, *newer, fmt.Sprintf("stuck: the direction flipped: %s asks %s what %s asked %s in %s (%.0f%% of the words are the same)",
				newer.From, newer.To, older.From, older.To, older.ID, 100*s))
			f.Related = []string{older.ID}
			out = append(out, f)
			flagged[newer.ID] = true
		}
	}
	return out
}

// waits reports whether e is an edge of the wait-for graph: a question
// that holds its issue up waiting for its target's answer (the rule is
// router.Blocks: a blocking one, pending or stale), its asker waiting on
// its target. An escalated one waits on a person, and a human is never
// part of a deadlock: people are not blocked workers here.
func waits(e ledger.IndexEntry) bool {
	rule, ok := router.Blocks(e.Blocking, e.Status)
	return ok && rule == router.BlockUnanswered && e.To != ledger.Human && e.From != e.To
}

// rank orders agents by precedence: a smaller rank is more upstream.
// Agents missing from the list come after it, by name.
type rank struct {
	pos  int
	name string
}

func rankOf(priority []string, agent string) rank {
	if i := slices.Index(priority, agent); i >= 0 {
		return rank{i, ""}
	}
	return rank{len(priority), agent}
}

func cmpRank(a, b rank) int {
	return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.name, b.name))
}

// graph is a wait-for graph: asker → target → the clarifications making
// that edge (pointers into the entries it was built from: a copy of each
// was most of what a side run allocates on an issue with many open
// questions).
type graph map[string]map[string][]*ledger.IndexEntry

func (g graph) add(e *ledger.IndexEntry) {
	if g[e.From] == nil {
		g[e.From] = map[string][]*ledger.IndexEntry{}
	}
	g[e.From][e.To] = append(g[e.From][e.To], e)
}

// cycle returns the agents of one cycle in g, in wait order (each waits on
// the next, the last on the first), or nil. The search is deterministic:
// agents and their targets in name order.
func (g graph) cycle() []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var found []string
	var visit func(a string) bool
	visit = func(a string) bool {
		color[a] = grey
		stack = append(stack, a)
		for _, b := range sortedKeys(g[a]) {
			switch color[b] {
			case grey:
				i := slices.Index(stack, b)
				found = slices.Clone(stack[i:])
				return true
			case white:
				if visit(b) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[a] = black
		return false
	}
	for _, a := range sortedKeys(g) {
		if color[a] == white && visit(a) {
			return found
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func ids(es []*ledger.IndexEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// DetectDeadlocks builds the wait-for graph of blocking, unanswered
// questions (asker waits on target) and breaks every cycle in it, of any
// length: in each cycle the questions of its lowest-precedence agent (by
// cfg.Priority, most upstream first) to the next agent in the cycle are
// escalated, and the others continue. With cfg.Scope "issue" each issue has
// its own graph; with "global" one graph spans all issues.
func DetectDeadlocks(entries []ledger.IndexEntry, cfg Config) []Finding {
	groups := map[int]graph{}
	for i := range entries {
		e := &entries[i]
		if !waits(*e) {
			continue
		}
		key := e.Issue
		if cfg.Scope == workflow.ScopeGlobal {
			key = -1
		}
		if groups[key] == nil {
			groups[key] = graph{}
		}
		groups[key].add(e)
	}
	keys := make([]int, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []Finding
	for _, k := range keys {
		g := groups[k]
		for {
			cyc := g.cycle()
			if cyc == nil {
				break
			}
			low := 0
			for i, a := range cyc {
				if cmpRank(rankOf(cfg.Priority, a), rankOf(cfg.Priority, cyc[low])) > 0 {
					low = i
				}
			}
			cyc = append(cyc[low:], cyc[:low]...) // the escalated agent first
			var parts, related []string
			for i, a := range cyc {
				b := cyc[(i+1)%len(cyc)]
				es := g[a][b]
				parts = append(parts, fmt.Sprintf("%s waits on %s (%s)", a, b, strings.Join(ids(es), ", ")))
				if i > 0 {
					related = append(related, ids(es)...)
				}
			}
			byRank := slices.Clone(cyc)
			slices.SortFunc(byRank, func(a, b string) int { return cmpRank(rankOf(cfg.Priority, a), rankOf(cfg.Priority, b)) })
			reason := fmt.Sprintf("deadlock: %s; by precedence %s, %s's question is escalated and the others continue",
				strings.Join(parts, ", "), strings.Join(byRank, " > "), cyc[0])
			for _, e := range g[cyc[0]][cyc[1]] {
				f := finding(KindDeadlock, ActEscalate, *e, reason)
				f.Cycle = slices.Clone(cyc)
				f.Related = related
				out = append(out, f)
			}
			delete(g[cyc[0]], cyc[1])
		}
	}
	return out
}

// DetectAbandoned finds the questions their asker provably left, given the
// hook that ran. An agent is its role on an issue (two engineers may work
// two issues at once), so only a "finish" acts, and only on the finishing
// agent's own questions on the issue it finished: the pending and stale ones
// are abandoned, and the answered ones resolved with their last answer (the
// asker had its answer and finished: the answer stood). A "start" closes
// nothing, here or on any other issue. A question to a human that is still
// unanswered is left open: a person may answer it yet, and it goes stale and
// escalates by the SLA rules.
func DetectAbandoned(entries []ledger.IndexEntry, hook Hook) []Finding {
	if hook.Phase != PhaseFinish {
		return nil
	}
	var out []Finding
	for _, e := range entries {
		if e.From != hook.Agent || e.Issue != hook.Issue || !live(e) {
			continue
		}
		switch {
		case e.Status == ledger.Answered:
			out = append(out, finding(KindAbandoned, ActResolve, e, fmt.Sprintf("%s finished issue #%d without resolving it", e.From, hook.Issue)))
		case e.To != ledger.Human:
			out = append(out, finding(KindAbandoned, ActAbandon, e, fmt.Sprintf("abandoned: %s finished issue #%d while this question was still %s", e.From, hook.Issue, e.Status)))
		}
	}
	return out
}

// Detect runs every detector over the open clarifications at now, in order
// of precedence — abandoned (only after a hook), deadlock, stuck, stale —
// each seeing the state the earlier ones' actions will leave, so that a
// clarification gets at most one action.
func Detect(entries []ledger.IndexEntry, now time.Time, cfg Config, hook *Hook) []Finding {
	// entries are the caller's (and may be shared: ledger.Store.OpenEntries);
	// work is copied from them when a finding first changes it, which on
	// most runs none does
	work, copied := entries, false
	var out []Finding
	take := func(fs []Finding) {
		if len(fs) == 0 {
			return
		}
		if !copied {
			work, copied = slices.Clone(work), true
		}
		acted := map[string]Action{}
		for _, f := range fs {
			if _, dup := acted[f.ID]; !dup {
				acted[f.ID] = f.Action
				out = append(out, f)
			}
		}
		work = slices.DeleteFunc(work, func(e ledger.IndexEntry) bool {
			a, ok := acted[e.ID]
			return ok && (a == ActAbandon || a == ActResolve)
		})
		for i := range work {
			if acted[work[i].ID] == ActEscalate {
				work[i].Status = ledger.Escalated
			}
		}
	}
	if hook != nil {
		take(DetectAbandoned(work, *hook))
	}
	take(DetectDeadlocks(work, cfg))
	take(DetectStuck(work, cfg))
	take(DetectStale(work, now, cfg))
	return out
}
