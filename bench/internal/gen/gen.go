package gen

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// Shape is a generated set of ledgers.
type Shape struct {
	Ledgers   int `json:"ledgers"`    // issue ledgers, issues 1..Ledgers
	PerLedger int `json:"per_ledger"` // clarifications per ledger
	Open      int `json:"open"`       // open clarifications, two or more per issue on the first issues
}

// Workspace creates the default workspace (config, workflows,
// state/.gitignore) under root, as `agentx init` does.
func Workspace(root string) error {
	_, err := workspace.Init(root, workflow.DefaultFiles(), false)
	return err
}

// StateDir is the state directory of the workspace at root.
func StateDir(root string) string { return filepath.Join(root, workspace.Dir, workspace.StateDir) }

var (
	askers    = []string{"engineer", "architect", "reviewer"}
	targets   = map[string][]string{"engineer": {"architect", "product-manager"}, "architect": {"product-manager"}, "reviewer": {"engineer", "architect"}}
	words     = strings.Fields("adapter schema cache queue retry tenant billing export import index migration rollout flag token session pool shard replica timeout budget quota audit webhook report")
	openState = []ledger.Status{ledger.Pending, ledger.Answered, ledger.Pending, ledger.Stale}
)

// Sentence is a question of n words drawn by r.
func Sentence(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[r.IntN(len(words))]
	}
	return "Should the " + strings.Join(ws, " ") + " change for this issue?"
}

// Record is clarification seq of issue, asked by from of to at t, with
// status st and the thread that status implies: the question; the answer
// unless it is pending or stale; the resolution when it is resolved. Open
// records are due a year after now, so the monitor has nothing to do.
func Record(r *rand.Rand, issue, seq int, from, to string, st ledger.Status, t, now time.Time) *ledger.Clarification {
	c := &ledger.Clarification{
		ID: ledger.FormatID(issue, seq), From: from, To: to, Topic: "Topic " + words[r.IntN(len(words))],
		Blocking: r.IntN(3) > 0, Status: st, Round: 1, MaxRounds: 5,
		Created: ledger.T(t), StaleAfter: ledger.T(t.Add(30 * time.Minute)),
		Thread: []ledger.ThreadEntry{{Round: 1, From: from, Type: ledger.Question, Body: Sentence(r, 12), Timestamp: ledger.T(t)}},
	}
	if st.Open() {
		c.StaleAfter = ledger.T(now.Add(365 * 24 * time.Hour))
	}
	if st != ledger.Pending && st != ledger.Stale {
		c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 1, From: to, Type: ledger.Answer, Body: Sentence(r, 30), Timestamp: ledger.T(t.Add(2 * time.Minute))})
	}
	if st == ledger.Resolved {
		rt := ledger.T(t.Add(3 * time.Minute))
		c.ResolvedAt = &rt
		c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 1, From: from, Type: ledger.Resolution, Body: "Proceeding with that.", Timestamp: rt})
	}
	return c
}

// Ledgers writes s.Ledgers ledgers of s.PerLedger clarifications each into
// the workspace at root (history: resolved, with a question, an answer and a
// resolution), s.Open of them left open (the last two, or more, of the
// first issues), and then builds the index from them as agentx would.
func Ledgers(root string, s Shape) error {
	r := rand.New(rand.NewPCG(1, uint64(s.Ledgers)))
	now := time.Now().UTC()
	past := now.Add(-90 * 24 * time.Hour)
	open := s.Open
	perIssue := max(2, (s.Open+s.Ledgers-1)/max(1, s.Ledgers)) // open ones per issue, on the first issues
	store := ledger.NewStore(StateDir(root), lock.Options{}, nil)
	for n := 1; n <= s.Ledgers; n++ {
		l := &ledger.Ledger{IssueNumber: n}
		for i := 1; i <= s.PerLedger; i++ {
			from := askers[r.IntN(len(askers))]
			to := targets[from][r.IntN(len(targets[from]))]
			t := past.Add(time.Duration(n*s.PerLedger+i) * time.Minute)
			st := ledger.Resolved
			if i > s.PerLedger-perIssue && open > 0 {
				open--
				st, t = openState[open%len(openState)], now.Add(-5*time.Minute)
			}
			l.Clarifications = append(l.Clarifications, Record(r, n, i, from, to, st, t, now))
		}
		if err := write(store, l); err != nil {
			return err
		}
	}
	return rebuildIndex(store)
}

// History writes issue's ledger into the workspace at root with n
// clarifications of the engineer to the architect, as a long-lived issue
// accumulates them: nine in ten resolved, one in twenty answered, one in
// twenty pending in its second round (question, answer, follow-up). Every
// record has a question and an answer.
func History(root string, issue, n int) error {
	r := rand.New(rand.NewPCG(2, uint64(n)))
	now := time.Now().UTC()
	past := now.Add(-time.Duration(n+60) * time.Minute)
	store := ledger.NewStore(StateDir(root), lock.Options{}, nil)
	l := &ledger.Ledger{IssueNumber: issue}
	for i := 1; i <= n; i++ {
		t := past.Add(time.Duration(i) * time.Minute)
		st := ledger.Resolved
		switch i % 20 {
		case 0:
			st = ledger.Answered // then followed up: pending again, below
		case 10:
			st = ledger.Answered
		}
		c := Record(r, issue, i, "engineer", "architect", st, t, now)
		if i%20 == 0 {
			c.Status, c.Round = ledger.Pending, 2
			c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 2, From: "engineer", Type: ledger.Question,
				Body: "Where does its configuration live: per environment, or one shared file?", Timestamp: ledger.T(t.Add(4 * time.Minute))})
		}
		l.Clarifications = append(l.Clarifications, c)
	}
	if err := write(store, l); err != nil {
		return err
	}
	return rebuildIndex(store)
}

func write(store *ledger.Store, l *ledger.Ledger) error {
	data, err := ledger.Encode(l)
	if err != nil {
		return err
	}
	p := store.Path(l.IssueNumber)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func rebuildIndex(store *ledger.Store) error {
	_, skipped, err := store.RebuildIndex(context.Background())
	if err != nil {
		return err
	}
	if len(skipped) > 0 {
		return fmt.Errorf("generated ledgers did not read back: %v", skipped[0])
	}
	return nil
}

var eventCycle = []router.EventType{router.EventRequested, router.EventAnswered, router.EventResolved}

// Events writes lines events into the workspace's event log, streamed (the
// memory used does not grow with lines): each of issues issues' questions
// requested, answered and resolved in turn, a second apart, ending now.
// It returns the file's size in bytes.
func Events(root string, lines, issues int) (int64, error) {
	path := filepath.Join(StateDir(root), "events.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w) // one object and a newline per Encode, as EventLog.Append writes
	issues = max(1, issues)
	start := time.Now().UTC().Add(-time.Duration(lines) * time.Second)
	for i := range lines {
		q := i / len(eventCycle) // the question this line is about
		issue := q%issues + 1
		from := askers[q%len(askers)]
		e := router.Event{
			Type: eventCycle[i%len(eventCycle)], ClarificationID: ledger.FormatID(issue, q/issues+1), IssueNumber: issue,
			FromAgent: from, ToAgent: targets[from][0], Topic: "Topic " + words[q%len(words)], Blocking: q%3 > 0,
			Round: 1, Timestamp: ledger.T(start.Add(time.Duration(i) * time.Second)), By: from,
		}
		if err := enc.Encode(e); err != nil {
			return 0, fmt.Errorf("events %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		return 0, fmt.Errorf("events %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), f.Close()
}
