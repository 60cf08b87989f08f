package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/lock"
)

var t0 = time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)

func newTestStore(t *testing.T) *Store {
	t.Helper()
	return NewStore(t.TempDir(), lock.Options{Agent: "test"}, func() time.Time { return t0 })
}

// ask appends a new pending clarification, the way the hub does.
func ask(s *Store, from, to, q string) func(*Ledger) error {
	return func(l *Ledger) error {
		now := T(s.Now())
		l.Clarifications = append(l.Clarifications, &Clarification{
			ID: l.NextID(), From: from, To: to, Topic: "topic", Blocking: true,
			Status: Pending, Round: 1, MaxRounds: 5, Created: now,
			StaleAfter: T(s.Now().Add(30 * time.Minute)),
			Thread:     []ThreadEntry{{Round: 1, From: from, Type: Question, Body: q, Timestamp: now}},
		})
		return nil
	}
}

func TestUpdateCreatesAndReads(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	l, err := s.Read(42)
	require.NoError(t, err)
	assert.Empty(t, l.Clarifications, "a missing ledger reads as empty")

	_, err = s.Update(ctx, 42, ask(s, "engineer", "architect", "Dual adapter?"))
	require.NoError(t, err)
	_, err = s.Update(ctx, 42, ask(s, "engineer", "product-manager", "Which export?"))
	require.NoError(t, err)

	l, err = s.Read(42)
	require.NoError(t, err)
	require.Len(t, l.Clarifications, 2)
	assert.Equal(t, "CLR-42-001", l.Clarifications[0].ID)
	assert.Equal(t, "CLR-42-002", l.Clarifications[1].ID)
	c, err := s.Get("CLR-42-002")
	require.NoError(t, err)
	assert.Equal(t, "product-manager", c.To)
	_, err = s.Get("CLR-42-003")
	assert.ErrorIs(t, err, ErrNotFound)

	issues, err := s.Issues()
	require.NoError(t, err)
	assert.Equal(t, []int{42}, issues)
	assert.NoFileExists(t, s.Path(42)+".lock", "the lock is released")
	leftovers, _ := filepath.Glob(filepath.Join(s.Dir(), ClarificationsDir, ".*"))
	assert.Empty(t, leftovers, "no temp files are left")
}

func TestUpdateEnforcesLifecycle(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	for _, q := range []string{"Q?", "R?", "S?"} {
		_, err := s.Update(ctx, 1, ask(s, "engineer", "architect", q))
		require.NoError(t, err)
	}
	before, err := os.ReadFile(s.Path(1))
	require.NoError(t, err)

	tests := []struct {
		name   string
		fn     func(*Ledger) error
		target any
	}{
		{"forbidden move", func(l *Ledger) error { l.Clarifications[0].Status = Resolved; return nil }, new(*TransitionError)},
		{"deletion", func(l *Ledger) error { l.Clarifications = nil; return nil }, nil},
		{"deletion of the last", func(l *Ledger) error { l.Clarifications = l.Clarifications[:2]; return nil }, nil},
		{"forbidden move of a moved record", func(l *Ledger) error {
			cs := l.Clarifications
			cs[0], cs[2] = cs[2], cs[0]
			cs[0].Status = Resolved
			return nil
		}, new(*TransitionError)},
		{"deletion among moves", func(l *Ledger) error {
			cs := l.Clarifications
			l.Clarifications = []*Clarification{cs[2], cs[0]}
			return nil
		}, nil},
		{"a record replaced by another", func(l *Ledger) error {
			c := *l.Clarifications[1]
			c.ID = "CLR-1-009"
			l.Clarifications[1] = &c
			return nil
		}, nil},
		{"duplicate id after a later one", func(l *Ledger) error {
			c := *l.Clarifications[1]
			l.Clarifications = append(l.Clarifications, &c)
			return nil
		}, nil},
		{"bad agent", func(l *Ledger) error { l.Clarifications[0].To = "Arch Itect"; return nil }, new(*InputError)},
		{"ask yourself", func(l *Ledger) error { l.Clarifications[0].To = "engineer"; return nil }, new(*InputError)},
		{"duplicate id", func(l *Ledger) error {
			c := *l.Clarifications[0]
			l.Clarifications = append(l.Clarifications, &c)
			return nil
		}, nil},
		{"foreign issue id", func(l *Ledger) error {
			c := *l.Clarifications[0]
			c.ID = "CLR-2-001"
			l.Clarifications = append(l.Clarifications, &c)
			return nil
		}, nil},
		{"fn error", func(l *Ledger) error { l.Clarifications[0].Status = Answered; return errors.New("boom") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Update(ctx, 1, tt.fn)
			require.Error(t, err)
			if tt.target != nil {
				assert.True(t, errors.As(err, tt.target), "got %T: %v", err, err)
			}
			after, err := os.ReadFile(s.Path(1))
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "a refused update writes nothing")
		})
	}
	// an allowed move goes through
	_, err = s.Update(ctx, 1, func(l *Ledger) error { return l.Clarifications[0].Move(Answered) })
	require.NoError(t, err)
}

func TestCorruptLedgerIsNeverOverwritten(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	path := s.Path(3)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	tests := []struct {
		name, content string
		line          int
	}{
		{"syntax", "{\n  \"issueNumber\": 3,\n  \"clarifications\": [\n    {\"id\": \"CLR-3-001\",,}\n  ]\n}\n", 4},
		{"type", "{\n  \"issueNumber\": \"three\",\n  \"clarifications\": []\n}\n", 2},
		{"truncated", "{\n  \"issueNumber\": 3,\n  \"clarif", 0},
		{"empty", "", 0},
		{"wrong issue", `{"issueNumber": 4, "clarifications": []}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o644))
			_, err := s.Update(ctx, 3, ask(s, "engineer", "architect", "Q?"))
			var ce *CorruptError
			require.True(t, errors.As(err, &ce), "got %v", err)
			assert.Equal(t, path, ce.Path)
			if tt.line > 0 {
				assert.Equal(t, tt.line, ce.Line)
				assert.Contains(t, ce.Error(), fmt.Sprintf("%s:%d:", path, tt.line))
			}
			assert.Contains(t, ce.Hint(), "untouched")
			got, _ := os.ReadFile(path)
			assert.Equal(t, tt.content, string(got), "the corrupt file is left as it was")
			_, err = s.Read(3)
			assert.True(t, errors.As(err, &ce))
		})
	}
}

func TestWrittenLedgersValidateAgainstSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile("../testdata/interop/agentx-clarification-ledger.schema.json")
	require.NoError(t, err)

	s := newTestStore(t)
	ctx := context.Background()
	_, err = s.Update(ctx, 42, ask(s, "engineer", "architect", "Dual adapter?"))
	require.NoError(t, err)
	_, err = s.Update(ctx, 42, func(l *Ledger) error {
		c := l.Clarifications[0]
		now := T(s.Now())
		c.Thread = append(c.Thread,
			ThreadEntry{Round: 1, From: "architect", Type: Answer, Body: "Repository pattern.", Timestamp: now})
		return c.Move(Answered)
	})
	require.NoError(t, err)
	_, err = s.Update(ctx, 42, func(l *Ledger) error {
		c := l.Clarifications[0]
		now := T(s.Now())
		c.Thread = append(c.Thread, ThreadEntry{Round: 1, From: "engineer", Type: Resolution, Body: "Proceeding.", Timestamp: now})
		c.ResolvedAt = &now
		return c.Move(Resolved)
	})
	require.NoError(t, err)
	_, err = s.Update(ctx, 42, ask(s, "engineer", Human, "Ship on Friday?"))
	require.NoError(t, err)
	_, err = s.Update(ctx, 42, func(l *Ledger) error {
		x := l.Clarifications[1].Ext()
		x.Workflow, x.Step, x.Options = "feature", "implement", []string{"yes", "no"}
		x.Assumptions = append(x.Assumptions, Assumption{Round: 1, By: "engineer", Body: "Friday is fine", Timestamp: T(s.Now())})
		return nil
	})
	require.NoError(t, err)

	data, err := os.ReadFile(s.Path(42))
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	require.NoError(t, err)
	require.Error(t, sch.Validate(doc), "the agentx additions are outside the AgentX schema")
	for _, c := range doc.(map[string]any)["clarifications"].([]any) {
		delete(c.(map[string]any), ExtraKey)
	}
	require.NoError(t, sch.Validate(doc), "agentx's own ledger validates, its additions aside:\n%s", data)

	// the validator is real: a record the schema forbids fails it
	var bad map[string]any
	require.NoError(t, json.Unmarshal(data, &bad))
	bad["clarifications"].([]any)[0].(map[string]any)["status"] = "bogus"
	assert.Error(t, sch.Validate(bad))
}

func TestAgentStatuses(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	m, err := s.ReadAgents()
	require.NoError(t, err)
	assert.Empty(t, m)
	issue := 42
	now := T(s.Now())
	_, err = s.UpdateAgents(ctx, func(m AgentStatuses) error {
		m["engineer"] = &AgentStatus{Status: BlockedClarification, Issue: &issue, LastActivity: &now, ClarificationID: "CLR-42-001", WaitingOn: "architect"}
		m["architect"] = &AgentStatus{Status: Clarifying, Issue: &issue, LastActivity: &now, ClarificationID: "CLR-42-001", RespondingTo: "engineer"}
		return nil
	})
	require.NoError(t, err)
	data, err := os.ReadFile(s.AgentStatusPath())
	require.NoError(t, err)
	assert.JSONEq(t, `{"engineer":{"status":"blocked-clarification","issue":42,"lastActivity":"2026-02-26T10:00:00.000Z","clarificationId":"CLR-42-001","waitingOn":"architect"},
		"architect":{"status":"clarifying","issue":42,"lastActivity":"2026-02-26T10:00:00.000Z","clarificationId":"CLR-42-001","respondingTo":"engineer"}}`, string(data))

	// a change that leaves the file as it is writes nothing: the same file,
	// not a copy renamed over it
	before, err := os.Stat(s.AgentStatusPath())
	require.NoError(t, err)
	_, err = s.UpdateAgents(ctx, func(m AgentStatuses) error {
		m["engineer"].WaitingOn = "architect"
		return nil
	})
	require.NoError(t, err)
	after, err := os.Stat(s.AgentStatusPath())
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "a file that already says it is not rewritten")

	_, err = s.UpdateAgents(ctx, func(m AgentStatuses) error {
		m["engineer"].Status = "sleeping"
		return nil
	})
	var ie *InputError
	assert.True(t, errors.As(err, &ie))

	require.NoError(t, os.WriteFile(s.AgentStatusPath(), []byte("{\"engineer\": [}"), 0o644))
	_, err = s.UpdateAgents(ctx, func(AgentStatuses) error { return nil })
	var ce *CorruptError
	assert.True(t, errors.As(err, &ce))
	got, _ := os.ReadFile(s.AgentStatusPath())
	assert.Equal(t, "{\"engineer\": [}", string(got))
}

// TestUpdateRefusesALostLock: when a foreign tool takes the lock file over
// while Update holds it (the writer was paused past the stale age), the
// write is not made: Update fails with a *lock.LostError and the ledger
// keeps what it had.
func TestUpdateRefusesALostLock(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	_, err := s.Update(ctx, 5, ask(s, "engineer", "architect", "first"))
	require.NoError(t, err)
	before, err := os.ReadFile(s.Path(5))
	require.NoError(t, err)
	_, err = s.Update(ctx, 5, func(l *Ledger) error {
		// the foreign takeover, while this writer holds the lock
		require.NoError(t, os.Remove(s.Path(5)+lock.Suffix))
		require.NoError(t, os.WriteFile(s.Path(5)+lock.Suffix, []byte(`{"agent":"cli","created":"2026-02-26T10:00:00Z"}`), 0o644))
		return ask(s, "engineer", "architect", "second")(l)
	})
	var lost *lock.LostError
	require.ErrorAs(t, err, &lost)
	after, err := os.ReadFile(s.Path(5))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing was written")
	l, err := s.Read(5)
	require.NoError(t, err)
	assert.Len(t, l.Clarifications, 1)
}

// TestReadRefusesALedgerItWouldMisread: a ledger that parses but breaks
// what every read relies on (an unknown status such as "Pending", an id
// twice, an id of another issue, no id) is a *CorruptError naming the file,
// for every reader and for a write, which leaves it untouched.
func TestReadRefusesALedgerItWouldMisread(t *testing.T) {
	rec := func(id, status string) string {
		return `{"id":"` + id + `","from":"engineer","to":"architect","topic":"t","blocking":true,"status":"` + status +
			`","round":1,"maxRounds":5,"created":"2026-02-26T10:00:00Z","staleAfter":"2026-02-26T10:30:00Z","thread":[]}`
	}
	tests := []struct{ name, records, want string }{
		{"unknown status", rec("CLR-42-001", "Pending"), `status "Pending" is not one of pending`},
		{"duplicate id", rec("CLR-42-001", "pending") + "," + rec("CLR-42-001", "resolved"), "CLR-42-001 appears twice"},
		{"another issue's id", rec("CLR-43-001", "pending"), "CLR-43-001 belongs to issue 43, not 42"},
		{"no id", rec("", "pending"), `id "" is not a clarification id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			data := `{"issueNumber":42,"clarifications":[` + tt.records + `]}`
			require.NoError(t, os.MkdirAll(filepath.Dir(s.Path(42)), 0o755))
			require.NoError(t, os.WriteFile(s.Path(42), []byte(data), 0o644))
			var ce *CorruptError
			_, err := s.Read(42)
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, s.Path(42), ce.Path)
			assert.Contains(t, err.Error(), tt.want)
			_, err = s.Update(context.Background(), 42, ask(s, "engineer", "architect", "q"))
			require.ErrorAs(t, err, &ce)
			got, _ := os.ReadFile(s.Path(42))
			assert.Equal(t, data, string(got), "never overwritten")
		})
	}
}

// TestOnlyLedgersTakeTurns: the fair hand-off (a run recorded in the
// queue file) is kept for the ledgers' locks, which AgentX tools poll
// for; agentx's own files hand over straight and record no run.
func TestOnlyLedgersTakeTurns(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir(), lock.Options{Fair: lock.Fairness{Bound: 400 * time.Millisecond, Window: 400 * time.Millisecond}}, func() time.Time { return t0 })
	_, err := s.Update(ctx, 5, ask(s, "engineer", "architect", "first"))
	require.NoError(t, err)
	_, err = s.UpdateAgents(ctx, func(m AgentStatuses) error { m["engineer"] = &AgentStatus{Status: Working}; return nil })
	require.NoError(t, err)
	q, err := os.ReadFile(s.Path(5) + lock.Suffix + lock.QueueSuffix)
	require.NoError(t, err)
	assert.Contains(t, string(q), "agentx-run", "a ledger's lock records its run")
	q, err = os.ReadFile(s.AgentStatusPath() + lock.Suffix + lock.QueueSuffix)
	require.NoError(t, err)
	assert.NotContains(t, string(q), "agentx-run", "agent-status.json's lock takes no turns")
}

// TestCheckChangesInOnePass: the one pass of checkChanges over records in
// place finds what the map-based checks (checkMoved, resolvedBy) find, on
// random changes: moves allowed or not, records added, one moved.
func TestCheckChangesInOnePass(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 5000 {
		n := 1 + rng.IntN(12)
		l := &Ledger{IssueNumber: 1}
		for i := range n {
			c := &Clarification{ID: FormatID(1, i+1), Status: Statuses[rng.IntN(len(Statuses))]}
			if rng.IntN(4) > 0 { // else one Validate refuses
				c.From, c.To = "engineer", "architect"
			}
			l.Clarifications = append(l.Clarifications, c)
		}
		cp := l.Checkpoint()
		for _, c := range l.Clarifications {
			if rng.IntN(3) == 0 {
				c.Status = Statuses[rng.IntN(len(Statuses))]
			}
		}
		for i := range rng.IntN(3) {
			id := FormatID(1, n+i+1)
			if rng.IntN(4) == 0 {
				id = FormatID(1, 1) // a duplicate: Validate refuses it
			}
			l.Clarifications = append(l.Clarifications, &Clarification{ID: id, From: "engineer", To: "architect", Status: Statuses[rng.IntN(len(Statuses))]})
		}
		if rng.IntN(5) == 0 && len(l.Clarifications) > 1 {
			cs := l.Clarifications
			cs[0], cs[len(cs)-1] = cs[len(cs)-1], cs[0]
		}
		got, gotInvalid, gotErr := checkChanges(cp, l)
		want, wantInvalid, wantErr := checksOneByOne(cp, l)
		require.Equal(t, wantErr, gotErr, "round %d", round)
		if wantErr == nil {
			require.Equal(t, wantInvalid, gotInvalid, "round %d", round)
		}
		if wantErr == nil && wantInvalid == nil { // else the write fails, and decided is not used
			require.Equal(t, want, got, "round %d", round)
		}
	}
}

// checksOneByOne is what checkChanges finds, as three passes find it: the
// moves by position when every record read is in its place (else by id),
// those resolved since, then Validate.
func checksOneByOne(cp Checkpoint, l *Ledger) (decided []int, invalid, err error) {
	cs := l.Clarifications
	inPlace := len(cs) >= cp.len()
	for i := 0; inPlace && i < cp.len(); i++ {
		inPlace = cs[i].ID == cp.rec(i).id
	}
	if !inPlace {
		err = checkMoved(cp, l)
	}
	for i := 0; inPlace && i < cp.len() && err == nil; i++ {
		if b, c := cp.rec(i), cs[i]; b.status != c.Status && !CanMove(b.status, c.Status) {
			err = &TransitionError{ID: c.ID, From: b.status, To: c.Status}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return cp.resolvedBy(l), l.Validate(), nil
}
