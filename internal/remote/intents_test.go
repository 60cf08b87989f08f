package remote

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// TestOutboxFindsItsQuestionMerged: a question kept in the outbox whose
// intent another host merged meanwhile (the remote went away while it
// waited) is found on the shared ledger by what was asked, under the id
// the merge gave it: it is not asked twice, and its old id is recorded as
// renumbered.
func TestOutboxFindsItsQuestionMerged(t *testing.T) {
	r := &memRemote{chains: map[int][]Commit{}}
	a := sharedHost(t, r)
	r.offline = true
	id, err := sharedAsk(a, "q")
	require.NoError(t, err)
	require.Equal(t, "CLR-1-001", id)
	r.offline = false

	// Another host's question, then a's, as a merge of a's intent left them.
	shared := &ledger.Ledger{IssueNumber: 1, Clarifications: []*ledger.Clarification{sharedRecord("CLR-1-001", "x"), sharedRecord("CLR-1-002", "q")}}
	data, err := ledger.Encode(shared)
	require.NoError(t, err)
	r.chains[1] = []Commit{{Data: data, Message: "CLR-1-001 asked; CLR-1-002 asked"}}

	_, err = a.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	final, err := ledger.Decode("mem", r.head(1).Data)
	require.NoError(t, err)
	assert.Len(t, final.Clarifications, 2, "the question is not asked twice")
	assert.Len(t, r.chains[1], 1, "nothing pushed")
	st, err := ReadSync(a.Store, 1)
	require.NoError(t, err)
	assert.Empty(t, st.Pending)
	assert.Equal(t, "CLR-1-002", st.Renumbered["CLR-1-001"])
}

// TestIntentChange: an intent is merged only when it adds records to the
// ledger it was made on, or adds entries to the threads of records there,
// as a pulled commit may; a record's change is replayed from what it was.
func TestIntentChange(t *testing.T) {
	enc := func(recs ...*ledger.Clarification) []byte { return encIssue1(t, recs...) }
	base := enc(sharedRecord("CLR-1-001", "x"))
	q, ok := intentChange(1, Intent{Name: "n", Host: "host3", Base: base, Data: enc(sharedRecord("CLR-1-001", "x"), sharedRecord("CLR-1-002", "q"))})
	require.True(t, ok)
	assert.Equal(t, "CLR-1-002 asked by engineer of architect (posted on host3)", q.Message, "the merged commit says what was asked, and which host asked it")
	require.Len(t, q.Records, 1)
	assert.Equal(t, "CLR-1-002", q.Records[0].ID)
	assert.True(t, created(q.Records[0].Before))

	changed := sharedRecord("CLR-1-001", "x")
	changed.Topic = "rewritten"
	_, ok = intentChange(1, Intent{Name: "n", Base: base, Data: enc(changed, sharedRecord("CLR-1-002", "q"))})
	assert.False(t, ok, "an intent that changes a record there")
	_, ok = intentChange(1, Intent{Name: "n", Base: base, Data: base})
	assert.False(t, ok, "an intent that adds nothing")

	// a change to a record an intent carries, identified by what it
	// adds: an answer (thread entries), an assumption (agentx's key alone)
	answered := sharedRecord("CLR-1-001", "x")
	require.NoError(t, answered.Move(ledger.Answered))
	answered.Thread = append(answered.Thread, ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Body: "Three tries.", Timestamp: answered.Created})
	assumed := sharedRecord("CLR-1-001", "x")
	assumed.Ext().Assumptions = []ledger.Assumption{{Round: 1, By: "engineer", Body: "the default", Timestamp: assumed.Created}}
	resolved := sharedRecord("CLR-1-001", "x") // closed: read sealed from the intent
	require.NoError(t, resolved.Move(ledger.Abandoned))
	resolved.Thread = append(resolved.Thread, ledger.ThreadEntry{Round: 1, From: "engineer", Type: ledger.Resolution, Body: "Abandoned: not needed.", Timestamp: resolved.Created})
	resolved.ResolvedAt = &resolved.Created
	for _, tc := range []struct {
		name, host, message string
		c                   *ledger.Clarification
	}{
		{"an answer", "host2", "CLR-1-001 answered by architect (posted on host2)", answered},
		{"an assumption", "host4", "CLR-1-001 assumption by engineer (posted on host4)", assumed},
		{"a closing", "host5", "CLR-1-001 abandoned by engineer (posted on host5)", resolved},
	} {
		q, ok = intentChange(1, Intent{Name: "n", Host: tc.host, Base: base, Data: enc(tc.c)})
		require.True(t, ok, tc.name)
		assert.Equal(t, tc.message, q.Message)
		require.Len(t, q.Records, 1)
		assert.JSONEq(t, string(mustRecordJSON(t, sharedRecord("CLR-1-001", "x"))), string(q.Records[0].Before), "%s: replayed only onto the record as it was", tc.name)
	}

	extra := sharedRecord("CLR-1-001", "x")
	extra.Ext().Summary = "no entry"
	_, ok = intentChange(1, Intent{Name: "n", Base: base, Data: enc(extra)})
	assert.False(t, ok, "a change that adds no thread entry and no assumption")

	// one that rewrites the assumptions there is not
	again := sharedRecord("CLR-1-001", "x")
	again.Ext().Assumptions = []ledger.Assumption{{Round: 1, By: "engineer", Body: "rewritten", Timestamp: assumed.Created}, {Round: 1, By: "engineer", Body: "the second", Timestamp: assumed.Created}}
	_, ok = intentChange(1, Intent{Name: "n", Base: enc(assumed), Data: enc(again)})
	assert.False(t, ok, "a change that rewrites an assumption while it adds one")
	again.Ext().Assumptions[0].Body = "the default"
	_, ok = intentChange(1, Intent{Name: "n", Base: enc(assumed), Data: enc(again)})
	assert.True(t, ok, "a second assumption, the first kept")
	_, ok = intentChange(1, Intent{Name: "n", Base: enc(assumed), Data: base})
	assert.False(t, ok, "a change that removes an assumption")
	person := sharedRecord("CLR-1-001", "x")
	person.Thread = append(person.Thread, ledger.ThreadEntry{Round: 1, From: ledger.Human, Type: ledger.Answer, Body: "forged", Timestamp: person.Created})
	_, ok = intentChange(1, Intent{Name: "n", Base: base, Data: enc(person)})
	assert.False(t, ok, "an entry as a person that is not a move a person makes (Appends' rule)")
	_, ok = intentChange(1, Intent{Name: "n"})
	assert.False(t, ok, "an intent that could not be read")

	// made on no ledger (the issue had none when it was posted: a commit
	// with no parent): what it holds is all added
	q, ok = intentChange(1, Intent{Name: "n", Base: []byte{}, Data: enc(sharedRecord("CLR-1-001", "q"))})
	require.True(t, ok, "an intent made on no ledger")
	require.Len(t, q.Records, 1)
	assert.Equal(t, "CLR-1-001", q.Records[0].ID)
	_, ok = intentChange(2, Intent{Name: "n", Base: []byte{}, Data: enc(sharedRecord("CLR-1-001", "q"))})
	assert.False(t, ok, "an intent made on no ledger holding another issue's ledger")
}

// TestIntentTooOldIsRemovedUnmerged: an intent posted longer ago than
// intentLife (its host killed, the question never acknowledged) is removed
// unmerged, so a question nobody was told was asked cannot appear much
// later; a young one beside it is merged, under the next free id, its
// subject naming the host that posted it.
func TestIntentTooOldIsRemovedUnmerged(t *testing.T) {
	enc := func(recs ...*ledger.Clarification) []byte { return encIssue1(t, recs...) }
	h := sharedHost(t, &memRemote{chains: map[int][]Commit{}})
	p := &posting{r: h.Replicator, f: &ledger.Locked{Issue: 1}}
	base := enc(sharedRecord("CLR-1-001", "x"))
	now := h.Store.Now()
	old := Intent{Name: waiterName(now.Add(-intentLife-time.Second), "gone"), Host: "gone",
		Base: base, Data: enc(sharedRecord("CLR-1-001", "x"), sharedRecord("CLR-1-002", "old question"))}
	young := Intent{Name: waiterName(now, "here"), Host: "here",
		Base: base, Data: enc(sharedRecord("CLR-1-001", "x"), sharedRecord("CLR-1-002", "young question"))}

	l, commits, names, err := p.combine(Snapshot{Version: "v1", Data: base}, []Intent{old, young})
	require.NoError(t, err)
	assert.Equal(t, []string{old.Name, young.Name}, names, "both removed from the queue")
	require.Len(t, commits, 1, "only the young one merged")
	assert.Equal(t, "CLR-1-002 asked by engineer of architect (posted on here)", commits[0].Message)
	require.Len(t, l.Clarifications, 2)
	assert.Equal(t, "young question", l.Clarifications[1].Topic)
}

// TestIntentOnNoLedger: a host that lost the race to create an issue's
// ledger posts its question as an intent made on no ledger (a commit
// with no parent), which the merge takes like any other: its question
// lands under the next free id.
func TestIntentOnNoLedger(t *testing.T) {
	a, b := twoRepos(t)
	ctx := context.Background()
	enc := func(recs ...*ledger.Clarification) []byte { return encIssue1(t, recs...) }
	first, err := a.Push(ctx, 1, Snapshot{}, []Commit{{Data: enc(sharedRecord("CLR-1-001", "first")), Message: "CLR-1-001 asked"}})
	require.NoError(t, err)
	name, err := b.Post(ctx, 1, "", Commit{Data: enc(sharedRecord("CLR-1-001", "second")), Message: "CLR-1-001 asked"}, time.Now())
	require.NoError(t, err)

	snap, intents, err := a.FetchIntents(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, first.Version, snap.Version)
	require.Len(t, intents, 1)
	assert.Equal(t, name, intents[0].Name)
	require.NotNil(t, intents[0].Base, "read")
	assert.Empty(t, intents[0].Base, "made on no ledger")

	h := sharedHost(t, &memRemote{chains: map[int][]Commit{}})
	p := &posting{r: h.Replicator, f: &ledger.Locked{Issue: 1}}
	l, commits, names, err := p.combine(snap, intents)
	require.NoError(t, err)
	assert.Equal(t, []string{name}, names)
	require.Len(t, commits, 1)
	require.Len(t, l.Clarifications, 2)
	assert.Equal(t, "CLR-1-002", l.Clarifications[1].ID)
	assert.Equal(t, "second", l.Clarifications[1].Topic)
	_, err = a.PushMerging(ctx, 1, snap, commits, names)
	require.NoError(t, err)
	_, intents, err = b.FetchIntents(ctx, 1)
	require.NoError(t, err)
	assert.Empty(t, intents, "merged and removed in the same push")
}

// TestStreakLooksForIntents: a host writing on its local copy without a
// fetch, write after write, never sees the intents other hosts post, and
// its pushes land first every time: once it has written so for
// streakLook, its next write fetches the intents, finds one waiting, and
// posts its own beside it, so the waiting question is merged (before the
// change, the last ask was pushed alone and the intent kept waiting).
func TestStreakLooksForIntents(t *testing.T) {
	step := streakGap / 2
	n := int(streakLook/step) + 1
	sc := besideAnIntent(t, n, step, func(ha host, st *SyncState) {
		require.False(t, st.StreakFrom.IsZero(), "the first write fetched, the next were pushed on the copy")
		require.True(t, ha.streaking(st))
	})
	st, err := ReadSync(sc.ha.Store, 1)
	require.NoError(t, err)
	assert.WithinDuration(t, sc.now, st.StreakFrom.Time, time.Millisecond, "the streak ended: one may start from the write that fetched")
	assert.False(t, sc.ha.streaking(st))
	assert.False(t, st.Moved.IsZero(), "the issue is now taken as contended")
}

// intentScene is what besideAnIntent left: host a, and its clock.
type intentScene struct {
	ha  host
	now time.Time
}

// besideAnIntent: host a asks n times, step apart (its first write
// fetches, the others may be pushed on its copy), before checks its sync
// state; then host b posts an intent and a asks once more. b's intent must
// be merged and a's last question after it.
func besideAnIntent(t *testing.T, n int, step time.Duration, before func(ha host, st *SyncState)) intentScene {
	t.Helper()
	a, b := intentRepos(t)
	ctx := context.Background()
	now := time.Now().UTC()
	ha := clockedHost(t, a, &now)
	for i := range n {
		_, err := sharedAsk(ha, fmt.Sprintf("a's %d", i+1))
		require.NoError(t, err)
		now = now.Add(step)
	}
	st, err := ReadSync(ha.Store, 1)
	require.NoError(t, err)
	before(ha, st)

	postAsk(t, b, "b's", now)
	now = now.Add(time.Millisecond) // a's intent is named apart from b's (one process: one pid)
	var last *ledger.Clarification
	_, err = ha.Update(ctx, 1, func(l *ledger.Ledger) error {
		last = sharedRecord(l.NextID(), "a's last")
		l.Clarifications = append(l.Clarifications, last)
		return nil
	})
	require.NoError(t, err)
	snap, intents, err := b.FetchIntents(ctx, 1)
	require.NoError(t, err)
	assert.Empty(t, intents, "b's intent merged")
	final, err := ledger.DecodeIssue("shared", 1, snap.Data)
	require.NoError(t, err)
	require.Len(t, final.Clarifications, n+2)
	assert.Equal(t, "b's", final.Clarifications[n].Topic)
	assert.Equal(t, "a's last", final.Clarifications[n+1].Topic, "merged after b's")
	assert.Equal(t, final.Clarifications[n+1].ID, last.ID, "the id told is the one merged")
	return intentScene{ha: ha, now: now}
}

// TestAnswerOnABusyIssueIsAnIntent: on an issue another host writes, an
// answer is posted as an intent beside the others' and merged with them
// in one push; the answer is on the shared ledger once, and the local
// copy is it. Before, the answer took its turn in the queue, and the
// waiting intent stayed unmerged. A second answer made on the same
// version, to a record that has moved since, is not merged: it is made
// again on the record as it stands.
func TestAnswerOnABusyIssueIsAnIntent(t *testing.T) {
	sc := onABusyIssue(t, sharedAnswer, func(c *ledger.Clarification) {
		require.NoError(t, c.Move(ledger.Answered))
		c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Body: "b's", Timestamp: c.Created})
	})
	for _, l := range []*ledger.Ledger{sc.merged, sc.local} {
		c := l.Find("CLR-1-001")
		assert.Equal(t, ledger.Answered, c.Status)
		require.Len(t, c.Thread, 2, "answered once")
		assert.Equal(t, "a's", c.Thread[1].Body)
	}
	c2 := sc.last.Find("CLR-1-002")
	require.Len(t, c2.Thread, 2, "answered once")
	assert.Equal(t, "a's", c2.Thread[1].Body)
}

// TestAssumptionOnABusyIssueIsAnIntent: likewise an assumption (a change
// to agentx's key alone, no thread entry), found on the shared ledger by
// the assumption it added; before, it took its turn, and the waiting
// intent stayed unmerged. b's assumption made on a record a's assumption
// moved since is not removed: assumptions commute, and it lands after a's.
func TestAssumptionOnABusyIssueIsAnIntent(t *testing.T) {
	sc := onABusyIssue(t, sharedAssume, func(c *ledger.Clarification) {
		c.Ext().Assumptions = append(c.Ext().Assumptions, ledger.Assumption{Round: 1, By: "engineer", Body: "b's", Timestamp: c.Created})
	})
	for _, l := range []*ledger.Ledger{sc.merged, sc.local} {
		c := l.Find("CLR-1-001")
		require.NotNil(t, c.X)
		require.Len(t, c.X.Assumptions, 1, "assumed once")
		assert.Equal(t, "a's", c.X.Assumptions[0].Body)
	}
	assert.Contains(t, sc.log, "CLR-1-001 assumption by engineer", "the merged commit says what it did")
	as := sc.last.Find("CLR-1-002").X.Assumptions
	require.Len(t, as, 2, "a's, then b's, rebased")
	assert.Equal(t, "a's", as[0].Body)
	assert.Equal(t, "b's", as[1].Body)
}

// busyScene is what onABusyIssue saw: the shared ledger once a's change
// to CLR-1-001 was merged, a's local copy then, the shared chain's
// subjects, and the shared ledger at the end.
type busyScene struct {
	merged, local, last *ledger.Ledger
	log                 string
}

// onABusyIssue: host a asks while host b posts intents, so that the issue
// is busy for a; b posts another ask and a makes change ("a's") on
// CLR-1-001: b's intent must be merged with it, in one push. Then b makes
// stale on CLR-1-002 of its old copy and posts it as an intent, after a
// has made change there itself; a's next ask merges what waits (last:
// the shared ledger then), and b's intent must be gone.
func onABusyIssue(t *testing.T, change func(s host, id, body string) error, stale func(c *ledger.Clarification)) busyScene {
	t.Helper()
	a, b := intentRepos(t)
	ctx := context.Background()
	now := time.Now().UTC()
	ha := clockedHost(t, a, &now)
	for _, q := range []string{"a's first", "a's second"} {
		_, err := sharedAsk(ha, q)
		require.NoError(t, err)
		now = now.Add(100 * time.Millisecond)
	}
	postAsk(t, b, "b's", now) // another host writes: the issue is now busy for a
	now = now.Add(time.Millisecond)
	_, err := sharedAsk(ha, "a's third")
	require.NoError(t, err)
	st, err := ReadSync(ha.Store, 1)
	require.NoError(t, err)
	require.True(t, ha.intentState(st), "the issue is taken as busy")

	postAsk(t, b, "b's second", now)
	now = now.Add(time.Millisecond)
	require.NoError(t, change(ha, "CLR-1-001", "a's"))
	var sc busyScene
	snap, intents, err := b.FetchIntents(ctx, 1)
	require.NoError(t, err)
	assert.Empty(t, intents, "b's intent merged, with a's change beside it")
	sc.merged, err = ledger.DecodeIssue("shared", 1, snap.Data)
	require.NoError(t, err)
	require.Len(t, sc.merged.Clarifications, 5)
	assert.Equal(t, "b's second", sc.merged.Clarifications[4].Topic)
	sc.local, err = ha.Read(1)
	require.NoError(t, err)
	log, err := a.git(ctx, nil, nil, "log", "--format=%s", a.Ref(1))
	require.NoError(t, err)
	sc.log = string(log)

	snap, _, err = b.FetchIntents(ctx, 1)
	require.NoError(t, err)
	mine, err := ledger.DecodeIssue("b", 1, snap.Data)
	require.NoError(t, err)
	stale(mine.Find("CLR-1-002"))
	data, err := ledger.Encode(mine)
	require.NoError(t, err)
	require.NoError(t, change(ha, "CLR-1-002", "a's"))
	_, err = b.Post(ctx, 1, snap.Version, Commit{Data: data, Message: "CLR-1-002 changed"}, now)
	require.NoError(t, err)
	now = now.Add(time.Millisecond)
	_, err = sharedAsk(ha, "a's fourth") // merges what waits
	require.NoError(t, err)
	snap, intents, err = b.FetchIntents(ctx, 1)
	require.NoError(t, err)
	assert.Empty(t, intents, "b's change made on a moved record: merged or removed")
	sc.last, err = ledger.DecodeIssue("shared", 1, snap.Data)
	require.NoError(t, err)
	return sc
}

// TestHolds: a change is found on the shared ledger by the thread entries
// or the assumptions it added, whatever was appended after them there.
func TestHolds(t *testing.T) {
	at := sharedRecord("CLR-1-001", "x").Created
	rec := func(assumed ...string) *ledger.Clarification {
		c := sharedRecord("CLR-1-001", "x")
		for _, body := range assumed {
			c.Ext().Assumptions = append(c.Ext().Assumptions, ledger.Assumption{Round: 1, By: "engineer", Body: body, Timestamp: at})
		}
		return c
	}
	answered := rec("mine")
	require.NoError(t, answered.Move(ledger.Answered))
	answered.Thread = append(answered.Thread, ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Body: "b", Timestamp: at})
	for _, tc := range []struct {
		name   string
		cur, c *ledger.Clarification
		want   bool
	}{
		{"as made", rec("mine"), rec("mine"), true},
		{"another's after it", rec("mine", "theirs"), rec("mine"), true},
		{"answered after it", answered, rec("mine"), true},
		{"not merged", rec(), rec("mine"), false},
		{"another's in its place", rec("theirs"), rec("mine"), false},
		{"another's before it (rebased)", rec("theirs", "mine"), rec("mine"), true},
		{"gone", nil, rec("mine"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, holds(tc.cur, tc.c))
		})
	}
}

// sharedAssume has s record, as the asker, an assumption on id on issue 1.
func sharedAssume(s host, id, body string) error {
	_, err := s.Update(context.Background(), 1, func(l *ledger.Ledger) error {
		c := l.Find(id)
		if c == nil {
			return ledger.ErrNotFound
		}
		x := c.Ext()
		x.Assumptions = append(x.Assumptions, ledger.Assumption{Round: c.Round, By: c.From, Body: body, Timestamp: ledger.T(s.Store.Now())})
		return nil
	})
	return err
}

// sharedResolve has s resolve id on issue 1, as the asker.
func sharedResolve(s host, id, body string) error {
	_, err := s.Update(context.Background(), 1, func(l *ledger.Ledger) error {
		c := l.Find(id)
		if c == nil {
			return ledger.ErrNotFound
		}
		if err := c.Move(ledger.Resolved); err != nil {
			return err
		}
		at := ledger.T(s.Store.Now())
		c.Thread = append(c.Thread, ledger.ThreadEntry{Round: c.Round, From: c.From, Type: ledger.Resolution, Body: body, Timestamp: at})
		c.ResolvedAt = &at
		return nil
	})
	return err
}

// mustRecordJSON is c as agentx writes a record.
func mustRecordJSON(t *testing.T, c *ledger.Clarification) []byte {
	t.Helper()
	raw, err := ledger.RecordJSON(c)
	require.NoError(t, err)
	return raw
}

// intentRepos is twoRepos, where a host whose intent waits merges the
// others' after 100 ms (intentStall), for the rest of the test.
func intentRepos(t *testing.T) (a, b *Git) {
	t.Helper()
	stall := intentStall
	t.Cleanup(func() { intentStall = stall })
	intentStall = 100 * time.Millisecond
	return twoRepos(t)
}

// postAsk has g post, at, an intent asking topic on issue 1's shared
// ledger as it is now.
func postAsk(t *testing.T, g *Git, topic string, at time.Time) {
	t.Helper()
	snap, _, err := g.FetchIntents(context.Background(), 1)
	require.NoError(t, err)
	_, err = g.Post(context.Background(), 1, snap.Version, Commit{Data: withAsk(t, snap, topic), Message: topic + " asked"}, at)
	require.NoError(t, err)
}

// TestPushOnCopyLearnsOfIntents: a push made on the local copy without a
// fetch leases the intents' mark at what this host last fetched; an intent
// posted since moves the mark, and the push fails without landing.
func TestPushOnCopyLearnsOfIntents(t *testing.T) {
	a, b := twoRepos(t)
	ctx := context.Background()
	enc := func(topics ...string) []byte {
		var recs []*ledger.Clarification
		for i, tp := range topics {
			recs = append(recs, sharedRecord(ledger.FormatID(1, i+1), tp))
		}
		return encIssue1(t, recs...)
	}
	head, err := a.Push(ctx, 1, Snapshot{}, []Commit{{Data: enc("1"), Message: "CLR-1-001 asked"}})
	require.NoError(t, err)
	head, err = a.PushOnCopy(ctx, 1, head, []Commit{{Data: enc("1", "2"), Message: "CLR-1-002 asked"}})
	require.NoError(t, err, "no mark yet: the push makes one")
	head, err = a.PushOnCopy(ctx, 1, head, []Commit{{Data: enc("1", "2", "3"), Message: "CLR-1-003 asked"}})
	require.NoError(t, err, "the mark as this host knows it")

	_, _, err = b.FetchIntents(ctx, 1)
	require.NoError(t, err)
	_, err = b.Post(ctx, 1, head.Version, Commit{Data: enc("1", "2", "3", "b's"), Message: "CLR-1-004 asked"}, time.Now())
	require.NoError(t, err)
	_, err = a.PushOnCopy(ctx, 1, head, []Commit{{Data: enc("1", "2", "3", "a's"), Message: "CLR-1-004 asked"}})
	require.ErrorIs(t, err, errLeased, "an intent was posted since")
	require.ErrorIs(t, err, ErrMoved)
	got, intents, err := a.FetchIntents(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, head.Version, got.Version, "nothing landed")
	require.Len(t, intents, 1)

	// Plain pushes lease nothing of it.
	_, err = b.Post(ctx, 1, head.Version, Commit{Data: enc("1", "2", "3", "b's 2"), Message: "CLR-1-004 asked"}, time.Now().Add(time.Millisecond))
	require.NoError(t, err)
	_, err = a.Push(ctx, 1, head, []Commit{{Data: enc("1", "2", "3", "a's"), Message: "CLR-1-004 asked"}})
	require.NoError(t, err)
}

// TestWriteOnCopyPostsBesideIntents: a host writing on its copy, well
// within the streak's second, whose next push finds an intent posted
// since (the mark moved) posts its own beside it: the waiting question is
// merged first. Before, that push landed ahead of the merge, and a host
// writing that often kept the merging host's push losing for a second.
func TestWriteOnCopyPostsBesideIntents(t *testing.T) {
	besideAnIntent(t, 2, 100*time.Millisecond, func(ha host, st *SyncState) {
		require.True(t, ha.fastState(st), "the next write is pushed on the copy")
	})
}

// TestStreakCountsFromTheFetch: the time a host has written on its copy
// without a fetch counts from its last write that fetched, not from the
// first that did not. Before, a host that won a race for the ledger and
// then pushed on its copy every 0.4 s looked for intents only a second
// after its second write: with 300 ms an exchange it wrote four times
// unseen, and the host merging the others' intents lost its push to it.
func TestStreakCountsFromTheFetch(t *testing.T) {
	r := &memRemote{chains: map[int][]Commit{}}
	now := time.Now().UTC()
	h := clockedHost(t, r, &now)
	for i, step := range []time.Duration{0, 400 * time.Millisecond, 400 * time.Millisecond} {
		now = now.Add(step)
		_, err := sharedAsk(h, fmt.Sprintf("q%d", i))
		require.NoError(t, err)
	}
	fetches, _, _ := r.counts()
	require.Equal(t, 1, fetches, "the first write fetched, the next two were pushed on the copy")
	now = now.Add(300 * time.Millisecond)
	st, err := ReadSync(h.Store, 1)
	require.NoError(t, err)
	assert.True(t, h.streaking(st), "1.1 s since the write that fetched: the next write looks")
}

// twoRepos is two repositories whose remote origin is one bare repository.
func twoRepos(t *testing.T) (a, b *Git) {
	a, b = gitRepo(t), gitRepo(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	gitT(t, a.Dir, "", "init", "--quiet", "--bare", bare)
	gitT(t, a.Dir, "", "remote", "add", "origin", bare)
	gitT(t, b.Dir, "", "remote", "add", "origin", bare)
	return a, b
}

// TestIntentCapIsCheckedWhereMerged: an ask checked against max_questions
// on a copy a few asks behind carries the cap in its intent (a cap: line),
// and the merge judges it again on the shared ledger: one past its asker's
// cap is removed unmerged, one within it merged. Before, an issue could
// end a few questions over the cap when one agent asked from many hosts.
func TestIntentCapIsCheckedWhereMerged(t *testing.T) {
	a, b := twoRepos(t)
	ctx := context.Background()
	enc := func(recs ...*ledger.Clarification) []byte { return encIssue1(t, recs...) }
	first, err := a.Push(ctx, 1, Snapshot{}, []Commit{{Data: enc(sharedRecord("CLR-1-001", "first")), Message: "CLR-1-001 asked"}})
	require.NoError(t, err)
	// b's copy is behind: it has not seen CLR-1-001, so its two asks
	// passed a cap of 1 there
	now := time.Now()
	post := func(topic string, max int, at time.Time) string {
		c := Commit{Data: enc(sharedRecord("CLR-1-001", topic)), Message: "CLR-1-001 asked" + capLine(ledger.WithCap(ctx, ledger.Cap{Max: max}))}
		name, err := b.Post(ctx, 1, "", c, at)
		require.NoError(t, err)
		return name
	}
	over := post("over the cap", 1, now)
	within := post("within the cap", 2, now.Add(time.Millisecond))

	snap, intents, err := a.FetchIntents(ctx, 1)
	require.NoError(t, err)
	require.Len(t, intents, 2)
	require.NotNil(t, intents[0].Cap)
	assert.Equal(t, 1, intents[0].Cap.Max)
	assert.Nil(t, intents[0].Cap.Since)
	h := sharedHost(t, &memRemote{chains: map[int][]Commit{}})
	p := &posting{r: h.Replicator, f: &ledger.Locked{Issue: 1}}
	l, commits, names, err := p.combine(snap, intents)
	require.NoError(t, err)
	assert.Equal(t, []string{over, within}, names, "both removed")
	require.Len(t, commits, 1, "only the one within its cap merged")
	require.Len(t, l.Clarifications, 2)
	assert.Equal(t, "within the cap", l.Clarifications[1].Topic)
	assert.Equal(t, first.Version, snap.Version)
}

func TestParseCap(t *testing.T) {
	since := time.Date(2026, 11, 29, 10, 0, 0, 5, time.UTC)
	for _, tc := range []struct {
		name, msg string
		want      *ledger.Cap
	}{
		{"none", "CLR-1-001 asked\n\nhost: a\n", nil},
		{"no run", "CLR-1-001 asked\n\ncap: 3 -\n\nhost: a\n", &ledger.Cap{Max: 3}},
		{"a run", "CLR-1-001 asked\n\ncap: 2 2026-11-29T10:00:00.000000005Z\n", &ledger.Cap{Max: 2, Since: &since}},
		{"zero", "x\n\ncap: 0 -\n", nil},
		{"negative", "x\n\ncap: -1 -\n", nil},
		{"not a number", "x\n\ncap: many -\n", nil},
		{"not a time", "x\n\ncap: 3 yesterday\n", nil},
		{"extra field", "x\n\ncap: 3 - more\n", nil},
		{"huge", "x\n\ncap: 99999999999999999999999 -\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseCap(tc.msg)
			if tc.want == nil {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, tc.want.Max, got.Max)
			if tc.want.Since == nil {
				assert.Nil(t, got.Since)
			} else {
				require.NotNil(t, got.Since)
				assert.True(t, tc.want.Since.Equal(*got.Since))
			}
		})
	}
	assert.Equal(t, "", capLine(context.Background()), "no cap: no line")
	c := parseCap("x" + capLine(ledger.WithCap(context.Background(), ledger.Cap{Max: 4, Since: &since})))
	require.NotNil(t, c)
	assert.Equal(t, 4, c.Max)
	assert.True(t, since.Equal(*c.Since), "round trip")
}

// encIssue1 is issue 1's ledger holding recs, encoded.
func encIssue1(t *testing.T, recs ...*ledger.Clarification) []byte {
	t.Helper()
	data, err := ledger.Encode(&ledger.Ledger{IssueNumber: 1, Clarifications: recs})
	require.NoError(t, err)
	return data
}

// TestReadOfABusyIssue: a read (a sync, the refresh) that brings in
// another host's change made moments ago notes the issue as busy, so that
// this host's next ask posts an intent beside the others' instead of
// pushing on its copy and landing before their merges; one bringing in an
// old change, or this host's own, does not.
func TestReadOfABusyIssue(t *testing.T) {
	a, b := twoRepos(t)
	b.Host = "other"
	ctx := context.Background()
	now := time.Now().UTC()
	ha, hb := clockedHost(t, a, &now), clockedHost(t, b, &now)
	moved := func() ledger.Time {
		t.Helper()
		st, err := ReadSync(ha.Store, 1)
		require.NoError(t, err)
		return st.Moved
	}

	_, err := sharedAsk(ha, "a's own")
	require.NoError(t, err)
	_, err = ha.Sync(ctx, 1, nil)
	require.NoError(t, err)
	assert.True(t, moved().IsZero(), "its own change")

	_, err = sharedAsk(hb, "b's")
	require.NoError(t, err)
	_, err = ha.Sync(ctx, 1, nil)
	require.NoError(t, err)
	assert.False(t, moved().IsZero(), "another host's change, made moments ago")
	assert.True(t, ha.intentState(mustSync(t, ha)), "the next ask posts an intent")

	c := clockedHost(t, a, &now) // a host of its own, on a's repository
	now = now.Add(fastAfter + time.Second)
	_, err = sharedAsk(hb, "b's later")
	require.NoError(t, err)
	now = now.Add(fastAfter + time.Second)
	_, err = c.Sync(ctx, 1, nil)
	require.NoError(t, err)
	assert.True(t, mustSync(t, c).Moved.IsZero(), "a change made longer ago than fastAfter")
}

func mustSync(t *testing.T, h host) *SyncState {
	t.Helper()
	st, err := ReadSync(h.Store, 1)
	require.NoError(t, err)
	return st
}

// TestLostRaceIsPostedAsAnIntent: a write on an issue that was quiet (no
// other host's change seen for a while: a transaction, not an intent)
// whose push loses to another host's is posted as an intent, and merged,
// rather than racing again and waiting its turn in the queue: an ask, and
// now an answer and an assumption too (before, those two joined the queue).
func TestLostRaceIsPostedAsAnIntent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(s host) error
		landed func(t *testing.T, l *ledger.Ledger)
		before func(s host) error // nil: nothing
	}{
		{"an ask", func(s host) error { _, err := sharedAsk(s, "a's third"); return err }, func(t *testing.T, l *ledger.Ledger) {
			assert.Equal(t, "a's third", l.Clarifications[len(l.Clarifications)-1].Topic)
		}, nil},
		{"an answer", func(s host) error { return sharedAnswer(s, "CLR-1-001", "a's") }, func(t *testing.T, l *ledger.Ledger) {
			assert.Equal(t, ledger.Answered, l.Find("CLR-1-001").Status)
		}, nil},
		{"an assumption", func(s host) error { return sharedAssume(s, "CLR-1-001", "a's") }, func(t *testing.T, l *ledger.Ledger) {
			require.NotNil(t, l.Find("CLR-1-001").X)
			assert.Len(t, l.Find("CLR-1-001").X.Assumptions, 1)
		}, nil},
		// a record it closes is read sealed from the intent: merged all
		// the same (before, removed unmerged and made again as a
		// transaction, a third push)
		{"a resolution", func(s host) error { return sharedResolve(s, "CLR-1-001", "a's") }, func(t *testing.T, l *ledger.Ledger) {
			assert.Equal(t, ledger.Resolved, l.Find("CLR-1-001").Status)
		}, func(s host) error { return sharedAnswer(s, "CLR-1-001", "yes") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := intentRepos(t)
			ctx := context.Background()
			now := time.Now().UTC()
			r := &racing{Git: a, t: t, b: b}
			ha := clockedHost(t, r, &now)
			a.Now = ha.Store.Now
			for _, q := range []string{"a's first", "a's second"} {
				_, err := sharedAsk(ha, q)
				require.NoError(t, err)
				now = now.Add(100 * time.Millisecond)
			}
			if tc.before != nil {
				require.NoError(t, tc.before(ha))
			}
			now = now.Add(2 * fastAfter) // quiet: the next write is a transaction
			r.races, r.pushes = 3, 0     // b lands an ask before each of a's next three pushes
			require.NoError(t, tc.change(ha))
			assert.Equal(t, 1, r.posted(), "a's change was posted as an intent")
			snap, intents, err := b.FetchIntents(ctx, 1)
			require.NoError(t, err)
			assert.Empty(t, intents)
			l, err := ledger.DecodeIssue("shared", 1, snap.Data)
			require.NoError(t, err)
			tc.landed(t, l)
			assert.Equal(t, 2, r.pushes, "it raced twice (on its copy, then on the ledger fetched), not a third time")
		})
	}
}

// racing is a host's transport whose pushes each lose, races times, to
// an ask host b lands just before; it counts its pushes and the intents it
// posts.
type racing struct {
	*Git
	t             *testing.T
	b             *Git
	races         int
	pushes, posts int
}

func (r *racing) race() {
	r.pushes++
	if r.races == 0 {
		return
	}
	r.races--
	postAskLanded(r.t, r.b, fmt.Sprintf("b's %d", r.races))
}

func (r *racing) Push(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error) {
	r.race()
	return r.Git.Push(ctx, issue, base, commits)
}

func (r *racing) PushOnCopy(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error) {
	r.race()
	return r.Git.PushOnCopy(ctx, issue, base, commits)
}

func (r *racing) Post(ctx context.Context, issue int, base string, c Commit, now time.Time) (string, error) {
	r.posts++
	return r.Git.Post(ctx, issue, base, c, now)
}

func (r *racing) posted() int { return r.posts }

// postAskLanded has g ask topic on issue 1's shared ledger, pushed.
func postAskLanded(t *testing.T, g *Git, topic string) {
	t.Helper()
	snap, err := g.Fetch(context.Background(), 1)
	require.NoError(t, err)
	_, err = g.Push(context.Background(), 1, snap, []Commit{{Data: withAsk(t, snap, topic), Message: "asked"}})
	require.NoError(t, err)
}

// withAsk is issue 1's shared ledger at snap with one more question,
// asked as topic.
func withAsk(t *testing.T, snap Snapshot, topic string) []byte {
	t.Helper()
	l, err := ledger.DecodeIssue("shared", 1, snap.Data)
	require.NoError(t, err)
	l.Clarifications = append(l.Clarifications, sharedRecord(l.NextID(), topic))
	data, err := ledger.Encode(l)
	require.NoError(t, err)
	return data
}

// TestWritersOfOneHostPostBesideEachOther: two agentx processes of one
// host (one workspace, one repository) write one busy issue at once. The
// first posts its intent and waits for it to be merged; meanwhile the
// second takes the issue's lock, posts its own, and the two are merged in
// one push. Before, the first held the lock while it waited (a whole
// remote round: 2.1–3.9 s at 300 ms an exchange), and the second posted
// only after, for a push of its own.
func TestWritersOfOneHostPostBesideEachOther(t *testing.T) {
	w := oneHostBusy(t, lock.Options{})
	h1, h2, first, b, ctx := w.h1, w.h2, w.first, w.b, context.Background()
	merges := &w.merges

	// the clock stands still from here: both writers read it at once; the
	// first's post takes a second (a slow remote), and the second starts
	// once it has landed
	first.delay, first.posted = time.Second, make(chan struct{})
	start := time.Now()
	var second2 sync.WaitGroup
	var err2 error
	second2.Go(func() {
		<-first.posted
		_, err2 = sharedAsk(h2, "a's fifth, from a second process")
	})
	_, err1 := sharedAsk(h1, "a's fourth")
	second2.Wait()
	t.Logf("both asked in %v", time.Since(start))
	require.NoError(t, err1)
	require.NoError(t, err2)
	assert.Equal(t, int32(1), merges.Load(), "both intents merged in one push")
	snap, intents, err := b.FetchIntents(ctx, 1)
	require.NoError(t, err)
	assert.Empty(t, intents)
	l, err := ledger.DecodeIssue("shared", 1, snap.Data)
	require.NoError(t, err)
	var topics []string
	for i, c := range l.Clarifications {
		assert.Equal(t, ledger.FormatID(1, i+1), c.ID, "ids dense")
		topics = append(topics, c.Topic)
	}
	assert.Subset(t, topics, []string{"a's fourth", "a's fifth, from a second process"})
	local, err := h1.Read(1)
	require.NoError(t, err)
	assert.Len(t, local.Clarifications, len(l.Clarifications), "the local copy is the shared ledger")
}

// oneHost is two agentx processes of host a (one workspace, one
// repository, transports first and second), on an issue that host b
// keeps busy, with its clock.
type oneHost struct {
	h1, h2        host
	first, second *oneHostWriter
	b             *Git
	merges        atomic.Int32
	now           time.Time
}

// oneHostBusy makes a oneHost whose stores take the lock with opts: h1
// has asked three times, the last beside b's intent, so that the issue
// is busy for host a; merges counts from there.
func oneHostBusy(t *testing.T, opts lock.Options) *oneHost {
	t.Helper()
	a, b := intentRepos(t)
	w := &oneHost{b: b, now: time.Now().UTC()}
	clock := func() time.Time { return w.now }
	dir := t.TempDir()
	a2 := &Git{Dir: a.Dir, Remote: a.Remote, Refs: a.Refs, Timeout: a.Timeout, Host: a.Host} // the same repository
	w.first, w.second = &oneHostWriter{Git: a, merges: &w.merges}, &oneHostWriter{Git: a2, merges: &w.merges}
	s1, s2 := ledger.NewStore(dir, opts, clock), ledger.NewStore(dir, opts, clock)
	w.h1, w.h2 = host{s1, Attach(s1, w.first)}, host{s2, Attach(s2, w.second)}
	a.Now, a2.Now = clock, clock
	a.settingsState, a2.settingsState = dir, dir
	for _, q := range []string{"a's first", "a's second"} {
		_, err := sharedAsk(w.h1, q)
		require.NoError(t, err)
		w.now = w.now.Add(100 * time.Millisecond)
	}
	postAsk(t, b, "b's", w.now) // another host writes: the issue is busy for a
	w.now = w.now.Add(time.Millisecond)
	_, err := sharedAsk(w.h1, "a's third")
	require.NoError(t, err)
	st, err := ReadSync(s1, 1)
	require.NoError(t, err)
	require.True(t, w.h1.intentState(st), "the issue is taken as busy")
	w.merges.Store(0)
	return w
}

// TestWriterOfOneHostHeldOut: a writer whose intent waits cannot take the
// issue's lock back (another process of the host holds it past the lock's
// wait: paused, say): it fails as a lock timeout, saying that its change
// was posted and may be merged; the intent waits on the remote.
func TestWriterOfOneHostHeldOut(t *testing.T) {
	w := oneHostBusy(t, lock.Options{Wait: 300 * time.Millisecond})
	w.first.delay, w.first.posted = 200*time.Millisecond, make(chan struct{})
	held := make(chan func())
	go func() {
		<-w.first.posted
		f, err := w.h2.Store.Lock(context.Background(), 1)
		if err != nil {
			held <- func() {}
			return
		}
		held <- func() { _ = f.Release() }
	}()
	_, err := sharedAsk(w.h1, "a's fourth")
	release := <-held
	defer release()
	var te *lock.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Contains(t, err.Error(), "the change was posted to")
	assert.Contains(t, err.Error(), "may be merged there")
	_, intents, err := w.b.FetchIntents(context.Background(), 1)
	require.NoError(t, err)
	require.Len(t, intents, 1, "its intent waits on the remote, as a killed host's does, for the next host that posts one to merge it")
	q, ok := intentChange(1, intents[0])
	require.True(t, ok)
	assert.Contains(t, q.Message, "asked by engineer")
}

// oneHostWriter is a transport of one of a host's agentx processes: it
// counts the merges it pushes (merges, shared), and, once posted is set,
// its next post takes delay longer (a slow remote) and says when it has
// landed.
type oneHostWriter struct {
	*Git
	delay  time.Duration
	posted chan struct{}
	once   sync.Once
	merges *atomic.Int32
}

func (w *oneHostWriter) Post(ctx context.Context, issue int, base string, c Commit, now time.Time) (string, error) {
	name, err := w.Git.Post(ctx, issue, base, c, now)
	if w.posted != nil {
		w.once.Do(func() {
			time.Sleep(w.delay)
			close(w.posted)
		})
	}
	return name, err
}

func (w *oneHostWriter) PushMerging(ctx context.Context, issue int, base Snapshot, commits []Commit, merged []string) (Snapshot, error) {
	w.merges.Add(1)
	return w.Git.PushMerging(ctx, issue, base, commits, merged)
}

// TestCapAllows: the questions an intent adds are judged against the cap
// together: an intent may carry several of one asker's (the questions
// other processes of its host handed to its writer), and two that each
// fit alone do not both fit when the ledger has room for one.
func TestCapAllows(t *testing.T) {
	onLedger := func(n int) *ledger.Ledger {
		l := &ledger.Ledger{IssueNumber: 1}
		for range n {
			l.Clarifications = append(l.Clarifications, sharedRecord(l.NextID(), "asked before"))
		}
		return l
	}
	adding := func(n int, from string) Queued {
		var q Queued
		for i := range n {
			c := sharedRecord(fmt.Sprintf("CLR-1-%03d", 90+i), "new")
			c.From = from
			raw, err := ledger.RecordJSON(c)
			require.NoError(t, err)
			q.Records = append(q.Records, QueuedRecord{ID: c.ID, After: raw})
		}
		return q
	}
	two := &ledger.Cap{Max: 2}
	for _, tc := range []struct {
		name   string
		cap    *ledger.Cap
		before int // the engineer's questions on the ledger
		q      Queued
		want   bool
	}{
		{"no cap", nil, 5, adding(3, "engineer"), true},
		{"room for both", two, 0, adding(2, "engineer"), true},
		{"room for one of two", two, 1, adding(2, "engineer"), false},
		{"room for the one", two, 1, adding(1, "engineer"), true},
		{"full", two, 2, adding(1, "engineer"), false},
		{"another asker's questions count apart", two, 2, adding(2, "architect"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, capAllows(onLedger(tc.before), tc.cap, tc.q))
		})
	}
}
