package remote

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// TestJudge: this host's own questions are judged by its clock; another
// host's by the evidence of the commits fetched, from when this host
// first saw it when that is later than it says it was asked, and not at
// all while a disagreement of clocks stands or the record cannot be read.
func TestJudge(t *testing.T) {
	t0 := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	mins := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	entry := func(id string, asked time.Time) ledger.IndexEntry {
		return ledger.IndexEntry{Issue: 1, ID: id, Asked: ledger.T(asked), StaleAfter: ledger.T(asked.Add(30 * time.Minute))}
	}
	tests := []struct {
		name    string
		arrived map[string]ledger.Time
		clock   string // ClockFile's content ("": none)
		e       ledger.IndexEntry
		now     time.Time
		want    time.Time
	}{
		{"own question: now", nil, "", entry("CLR-1-001", mins(0)), mins(40), mins(40)},
		{"another host's, no evidence yet: held", map[string]ledger.Time{"CLR-1-001": ledger.T(mins(0))}, "", entry("CLR-1-001", mins(0)), mins(40), time.Time{}},
		{"another host's, evidence behind now: the evidence", map[string]ledger.Time{"CLR-1-001": ledger.T(mins(0))},
			`{"newest":"` + mins(20).Format(time.RFC3339) + `"}`, entry("CLR-1-001", mins(0)), mins(40), mins(20)},
		{"another host's, evidence past now: now", map[string]ledger.Time{"CLR-1-001": ledger.T(mins(0))},
			`{"newest":"` + mins(50).Format(time.RFC3339) + `"}`, entry("CLR-1-001", mins(0)), mins(40), mins(40)},
		{"asked 5 h before it arrived: judged from its arrival", map[string]ledger.Time{"CLR-1-001": ledger.T(mins(300))},
			`{"newest":"` + mins(400).Format(time.RFC3339) + `"}`, entry("CLR-1-001", mins(0)), mins(310), mins(10)},
		{"a host behind this one: held", map[string]ledger.Time{"CLR-1-001": ledger.T(mins(0))},
			`{"newest":"` + mins(50).Format(time.RFC3339) + `","skews":[{"host":"b","offsetSeconds":-18000,"commit":"x","issue":1}]}`, entry("CLR-1-001", mins(0)), mins(40), time.Time{}},
		{"a host ahead (a commit from the future): not held", map[string]ledger.Time{"CLR-1-001": ledger.T(mins(0))},
			`{"newest":"` + mins(50).Format(time.RFC3339) + `","skews":[{"host":"mallory","offsetSeconds":86000,"commit":"x","issue":1}]}`, entry("CLR-1-001", mins(0)), mins(40), mins(40)},
		{"a disagreement stands: own question still judged", nil,
			`{"skews":[{"host":"b","offsetSeconds":18000,"commit":"x","issue":1}]}`, entry("CLR-1-001", mins(0)), mins(40), mins(40)},
		{"record of the clocks unreadable: held", map[string]ledger.Time{"CLR-1-001": ledger.T(mins(0))}, `{"newest":`, entry("CLR-1-001", mins(0)), mins(40), time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ledger.NewStore(t.TempDir(), lock.Options{}, nil)
			Attach(s, &memRemote{chains: map[int][]Commit{}})
			require.NoError(t, os.MkdirAll(filepath.Join(s.Dir(), SyncDir), 0o755))
			st, err := json.Marshal(SyncState{Arrived: tt.arrived})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(SyncPath(s, 1), st, 0o644))
			if tt.clock != "" {
				require.NoError(t, os.WriteFile(ClockPath(s), []byte(tt.clock), 0o644))
			}
			got := NewJudge(s).At(tt.e, tt.now)
			assert.True(t, got.Equal(tt.want), "got %v, want %v", got, tt.want)
		})
	}
	// Without a remote there is no judge, and nil judges at now.
	s := ledger.NewStore(t.TempDir(), lock.Options{}, nil)
	assert.Nil(t, NewJudge(s))
	assert.Equal(t, mins(40), NewJudge(s).At(entry("CLR-1-001", mins(0)), mins(40)))
}

func TestSkewString(t *testing.T) {
	assert.Equal(t, "the clock of host ci-7 is 5h0m0s behind this host's (commit 0123456789ab on issue #5)",
		Skew{Host: "ci-7", Offset: -5 * 3600, Commit: "0123456789abcdef", Issue: 5}.String())
	assert.Equal(t, "the clock of an unnamed host is 6m40s ahead of this host's (commit abc on issue #1)",
		Skew{Offset: 400, Commit: "abc", Issue: 1}.String())
}

// TestKeepArrived: the questions noted as another host's are dropped once
// closed or gone.
func TestKeepArrived(t *testing.T) {
	open := sharedRecord("CLR-1-001", "a")
	closed := sharedRecord("CLR-1-002", "b")
	closed.Status = ledger.Resolved
	st := &SyncState{Arrived: map[string]ledger.Time{"CLR-1-001": {}, "CLR-1-002": {}, "CLR-1-009": {}}}
	keepArrived(st, &ledger.Ledger{IssueNumber: 1, Clarifications: []*ledger.Clarification{open, closed}})
	assert.Equal(t, map[string]ledger.Time{"CLR-1-001": {}}, st.Arrived)
}

// TestArrived: a question another host asked is noted when a fetch first
// brings it here, and again when it starts a new round (a follow-up);
// this host's own questions are never noted, and a closed one is dropped.
func TestArrived(t *testing.T) {
	mem := &memRemote{chains: map[int][]Commit{}}
	t0 := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	clk := t0
	a := sharedHost(t, mem)
	bs := ledger.NewStore(t.TempDir(), lock.Options{}, func() time.Time { return clk })
	b := host{bs, Attach(bs, mem)}
	arrived := func() map[string]ledger.Time {
		st, err := ReadSync(b.Store, 1)
		require.NoError(t, err)
		return st.Arrived
	}
	id, err := sharedAsk(a, "Cache")
	require.NoError(t, err)
	mine, err := sharedAsk(b, "Mine")
	require.NoError(t, err)
	assert.Equal(t, map[string]ledger.Time{id: ledger.T(t0)}, arrived(), "b's own %s is not noted", mine)

	require.NoError(t, sharedAnswer(a, id, "yes"))
	clk = t0.Add(time.Hour)
	_, err = b.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	assert.Equal(t, ledger.T(t0), arrived()[id], "an answer starts no new round")

	_, err = a.Update(context.Background(), 1, func(l *ledger.Ledger) error {
		c := l.Find(id)
		if err := c.Move(ledger.Pending); err != nil {
			return err
		}
		c.Round++
		c.Thread = append(c.Thread, ledger.ThreadEntry{Round: c.Round, From: "engineer", Type: ledger.Question, Body: "and then?", Timestamp: c.Created})
		return nil
	})
	require.NoError(t, err)
	clk = t0.Add(2 * time.Hour)
	_, err = b.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	assert.Equal(t, ledger.T(clk), arrived()[id], "a follow-up is counted from when it arrived")

	_, err = a.Update(context.Background(), 1, func(l *ledger.Ledger) error { return l.Find(id).Move(ledger.Abandoned) })
	require.NoError(t, err)
	_, err = b.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	assert.Empty(t, arrived(), "closed: dropped")
}

// TestSinceLastLook: the commits from a head down its first parents to the
// head the last look found, head first, when that is met within clockWalk
// commits; otherwise none (the head alone is looked at then).
func TestSinceLastLook(t *testing.T) {
	ctx := context.Background()
	g := gitRepo(t)
	// a line of clockWalk+2 commits, and a merge on it whose second parent
	// is off the line
	var line []string
	for i := range clockWalk + 2 {
		var parents []string
		if i > 0 {
			parents = []string{line[i-1]}
		}
		sha, err := g.commitTree(ctx, 1, Commit{Data: []byte{byte('a' + i)}, Message: "c"}, parents)
		require.NoError(t, err)
		line = append(line, sha)
	}
	side, err := g.commitTree(ctx, 1, Commit{Data: []byte("side"), Message: "side"}, []string{line[0]})
	require.NoError(t, err)
	top := len(line) - 1
	merge, err := g.commitTree(ctx, 1, Commit{Data: []byte("merge"), Message: "merge"}, []string{line[top], side})
	require.NoError(t, err)
	o, err := g.objects(ctx)
	require.NoError(t, err)
	defer o.close()
	down := func(n int) []string { // the line's n last commits, head first
		out := slices.Clone(line[len(line)-n:])
		slices.Reverse(out)
		return out
	}

	for _, tc := range []struct {
		name       string
		head, prev string
		want       []string // nil: not met
	}{
		{"one commit on top", line[top], line[top-1], down(1)},
		{"three", line[top], line[top-3], down(3)},
		{"clockWalk commits", line[top], line[top-clockWalk], down(clockWalk)},
		{"one more than clockWalk", line[top], line[top-clockWalk-1], nil},
		{"a merge: down its first parent", merge, line[top-1], []string{merge, line[top]}},
		{"the last look's head is off the first parents", merge, side, nil},
		{"moved back", line[top-2], line[top], nil},
		{"no last look", line[top], "", nil},
		{"not a commit here", line[top], strings.Repeat("0", 40), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chain, ok := sinceLastLook(o, tc.head, tc.prev)
			if tc.want == nil {
				assert.False(t, ok)
				assert.Empty(t, chain)
				return
			}
			require.True(t, ok)
			var got []string
			for _, c := range chain {
				got = append(got, c.ID)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
