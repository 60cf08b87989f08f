package router

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// wholeLedgers is what List returned before it read one ledger at a time:
// every ledger read whole, in issue order, its matching records kept.
func wholeLedgers(t *testing.T, h *Hub, f Filter) []Record {
	t.Helper()
	issues, err := h.listIssues(f)
	require.NoError(t, err)
	var out []Record
	for _, n := range issues {
		l, err := h.Store.Read(n)
		if err != nil {
			continue
		}
		for _, c := range l.Clarifications {
			if f.match(c) {
				out = append(out, Record{IssueNumber: n, Clarification: c})
			}
		}
	}
	return out
}

func ids(recs []Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID + " " + string(r.Status)
	}
	return out
}

// TestEachIsListOneLedgerAtATime: Each, read ahead on several cores or on
// one, yields the records List and a whole read of every ledger give, in
// the same order; an unreadable ledger is reported and the rest listed;
// an error from fn stops the walk.
func TestEachIsListOneLedgerAtATime(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	for n := 1; n <= 40; n++ {
		for range 1 + n%3 {
			rec, err := h.Ask(ctx, AskRequest{Issue: n, From: "engineer", To: "architect", Topic: "t", Question: "q", NonBlocking: true})
			require.NoError(t, err)
			if n%4 == 0 {
				_, err = h.Answer(ctx, rec.ID, "architect", "a")
				require.NoError(t, err)
				_, err = h.Resolve(ctx, rec.ID, "engineer", "thanks")
				require.NoError(t, err)
			}
		}
	}
	require.NoError(t, os.WriteFile(h.Store.Path(17), []byte("{not json"), 0o644))

	for _, f := range []Filter{{All: true}, {}, {Statuses: []ledger.Status{ledger.Resolved}}, {All: true, Agent: "architect"}} {
		want := wholeLedgers(t, h, f)
		recs, errs, err := h.List(f)
		require.NoError(t, err)
		assert.Equal(t, ids(want), ids(recs), "List %+v", f)
		assert.Len(t, errs, 1, "the unreadable ledger")
		for _, procs := range []int{1, 4} {
			prev := runtime.GOMAXPROCS(procs)
			var got []Record
			errs, err := h.Each(f, func(r Record) error { got = append(got, r); return nil })
			runtime.GOMAXPROCS(prev)
			require.NoError(t, err)
			assert.Equal(t, ids(want), ids(got), "Each %+v on %d cores", f, procs)
			assert.Len(t, errs, 1, "the unreadable ledger")
		}
	}

	stop := errors.New("enough")
	calls := 0
	_, err := h.Each(Filter{All: true}, func(Record) error {
		calls++
		if calls == 5 {
			return stop
		}
		return nil
	})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 5, calls)

	n := 17
	_, err = h.Each(Filter{Issue: &n, All: true}, func(Record) error { return nil })
	assert.Error(t, err, "the one issue asked for cannot be read")
}

// TestDigestIsComputeStats: records added one at a time give ComputeStats
// of them all, and Stats leaves the digest as it was.
func TestDigestIsComputeStats(t *testing.T) {
	now := t0
	h, _ := newTestHubAt(t, "", &now)
	ctx := context.Background()
	for n := 1; n <= 6; n++ {
		now = t0.Add(time.Duration(n) * time.Minute)
		rec, err := h.Ask(ctx, AskRequest{Issue: n, From: "engineer", To: "architect", Topic: "Database adapter", Question: "q", NonBlocking: true})
		require.NoError(t, err)
		if n%2 == 0 {
			now = now.Add(time.Duration(n) * time.Minute)
			_, err = h.Answer(ctx, rec.ID, "architect", "a")
			require.NoError(t, err)
		}
	}
	recs, _, err := h.List(Filter{All: true})
	require.NoError(t, err)
	at := t0.Add(time.Hour)
	d := Digest{Now: at, Longest: DefaultLongestOpen}
	for _, r := range recs {
		d.Add(r)
	}
	want := ComputeStats(recs, at)
	assert.Equal(t, want, d.Stats())
	assert.Equal(t, want, d.Stats(), "a second Stats gives the same")
	assert.InDelta(t, 1.0/2, want.Agents[0].AnswerRate, 1e-9)
	assert.Equal(t, WaitFigures{Rounds: 3, Median: Duration{4 * time.Minute}, P90: Duration{6 * time.Minute}, Total: Duration{12 * time.Minute}}, want.Waits.Replied)
	assert.Equal(t, 3, want.Waits.Open.Rounds)
	assert.Equal(t, "CLR-1-001", want.Waits.LongestOpen[0].ID, "asked first, waiting longest")
	var empty Digest
	assert.Equal(t, ComputeStats(nil, at), empty.Stats())
}
