package remote

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// racingRemote is memRemote that can put a chain back (republisher),
// where another host moves the ref first the next moves times.
type racingRemote struct {
	*memRemote
	moves  int
	tries  int
	saved  map[string][]byte // versions that are no longer on the chain
	refuse bool              // CheckPulled refuses every version (a rewritten chain)
	fork   string            // what ForkPoint answers ("": no common commit)
}

func (m *racingRemote) CheckPulled(_ context.Context, issue int, settled, version string) (map[string]string, error) {
	if !m.refuse || settled == m.fork { // from the fork the other chain only appends
		return nil, nil
	}
	return nil, &HistoryError{Kind: HistoryRewound, Issue: issue, Ref: m.Name(issue), Settled: settled, Found: version}
}

func (m *racingRemote) Read(_ context.Context, issue int, sha string) (Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if data, ok := m.saved[sha]; ok {
		return Snapshot{Version: sha, Data: data}, nil
	}
	return Snapshot{}, fmt.Errorf("issue %d: no version %s", issue, sha)
}

func (m *racingRemote) ForkPoint(context.Context, string, string) (string, error) { return m.fork, nil }

func (m *racingRemote) Republish(_ context.Context, issue int, _ []string, _ string, c Commit) (Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tries++
	if m.moves > 0 {
		m.moves--
		return Snapshot{}, fmt.Errorf("mem: %w", ErrMoved)
	}
	m.chains[issue] = append(m.chains[issue], c)
	return m.head(issue), nil
}

// TestRepublishLooksAgain: a ref another host moves while this one puts
// its chain back is looked at again, up to [remote] attempts times (the
// memory remote's 5), then the write is refused as busy (exit 5 at the
// command line), nothing written.
func TestRepublishLooksAgain(t *testing.T) {
	for _, tt := range []struct {
		moves int
		want  error
	}{{0, nil}, {2, nil}, {9, &BusyError{}}} {
		t.Run(strconv.Itoa(tt.moves), func(t *testing.T) {
			mem := &memRemote{chains: map[int][]Commit{}}
			rr := &racingRemote{memRemote: mem, moves: tt.moves, saved: map[string][]byte{}}
			h := sharedHost(t, rr)
			_, err := sharedAsk(h, "Cache")
			require.NoError(t, err)
			mem.mu.Lock()
			rr.saved[mem.head(1).Version] = mem.head(1).Data
			mem.chains[1] = nil // a git push --mirror from a clone without the refs
			mem.mu.Unlock()
			out, err := h.Republish(context.Background(), 1)
			if tt.want != nil {
				var be *BusyError
				require.True(t, errors.As(err, &be), "got %v", err)
				assert.Equal(t, 5, be.Attempts)
				assert.Empty(t, mem.chains[1], "nothing written")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.moves+1, rr.tries)
			assert.NotEmpty(t, out.Head)
			l, err := ledger.DecodeIssue("mem", 1, mem.head(1).Data)
			require.NoError(t, err)
			assert.Equal(t, "Cache", l.Clarifications[0].Topic, "the chain is back")
		})
	}
}

// TestRepublishKeepsEachQuestionOnce: the other chain holds a question
// this host holds too, under another id (an earlier republish renumbered
// it on one side, and the fork point predates it): it is not added again.
// What the other chain adds to it is taken; its own new questions take the
// next free ids.
func TestRepublishKeepsEachQuestionOnce(t *testing.T) {
	mem := &memRemote{chains: map[int][]Commit{}}
	rr := &racingRemote{memRemote: mem, saved: map[string][]byte{}}
	h := sharedHost(t, rr)
	for _, topic := range []string{"first", "other"} {
		_, err := sharedAsk(h, topic)
		require.NoError(t, err)
	}
	mem.mu.Lock()
	rr.saved[mem.head(1).Version] = mem.head(1).Data
	// The other chain: first, x, other (as CLR-1-003, answered), extra.
	other := sharedRecord("CLR-1-003", "other")
	require.NoError(t, other.Move(ledger.Answered))
	other.Thread = append(other.Thread, ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Body: "yes", Timestamp: other.Created})
	theirs := &ledger.Ledger{IssueNumber: 1, Clarifications: []*ledger.Clarification{
		sharedRecord("CLR-1-001", "first"), sharedRecord("CLR-1-002", "x"), other, sharedRecord("CLR-1-004", "extra")}}
	data, err := ledger.Encode(theirs)
	require.NoError(t, err)
	mem.chains[1] = []Commit{{Data: data, Message: "a chain from elsewhere"}}
	rr.refuse = true
	mem.mu.Unlock()

	out, err := h.Republish(context.Background(), 1)
	require.NoError(t, err)
	rr.refuse = false
	assert.True(t, out.Merged)
	l, err := ledger.DecodeIssue("mem", 1, mem.head(1).Data)
	require.NoError(t, err)
	var got []string
	for _, c := range l.Clarifications {
		got = append(got, c.ID+" "+c.Topic+" "+string(c.Status))
	}
	assert.Equal(t, []string{"CLR-1-001 first pending", "CLR-1-002 other answered", "CLR-1-003 x pending", "CLR-1-004 extra pending"}, got)
}

// TestRepublishForkHoldsAnotherQuestion: the fork point holds, under an
// id, another question than the other chain does there now (a chain
// merged before renumbered it): the other chain's is a new question, not
// a change to this host's, which is kept.
func TestRepublishForkHoldsAnotherQuestion(t *testing.T) {
	mem := &memRemote{chains: map[int][]Commit{}}
	rr := &racingRemote{memRemote: mem, saved: map[string][]byte{}}
	h := sharedHost(t, rr)
	for _, topic := range []string{"first", "mine"} {
		_, err := sharedAsk(h, topic)
		require.NoError(t, err)
	}
	mem.mu.Lock()
	rr.saved[mem.head(1).Version] = mem.head(1).Data
	rr.saved["fork"], rr.fork = mem.head(1).Data, "fork" // the fork holds "mine" as CLR-1-002
	theirs := &ledger.Ledger{IssueNumber: 1, Clarifications: []*ledger.Clarification{sharedRecord("CLR-1-001", "first"), sharedRecord("CLR-1-002", "theirs")}}
	data, err := ledger.Encode(theirs)
	require.NoError(t, err)
	mem.chains[1] = []Commit{{Data: data, Message: "a chain from elsewhere"}}
	rr.refuse = true
	mem.mu.Unlock()

	_, err = h.Republish(context.Background(), 1)
	require.NoError(t, err)
	l, err := ledger.DecodeIssue("mem", 1, mem.head(1).Data)
	require.NoError(t, err)
	var got []string
	for _, c := range l.Clarifications {
		got = append(got, c.ID+" "+c.Topic)
	}
	assert.Equal(t, []string{"CLR-1-001 first", "CLR-1-002 mine", "CLR-1-003 theirs"}, got)
}

// renumberingRemote is a chain that another host republished: each pull's
// check says which ids it moved.
type renumberingRemote struct {
	*memRemote
	renumbered map[string]string
}

func (m *renumberingRemote) CheckPulled(context.Context, int, string, string) (map[string]string, error) {
	return m.renumbered, nil
}

// TestRepublishRenumberingTellsTheAsker: a host that pulls a chain another
// host republished, in which its own question took another id, tells its
// asker as a delivery of the outbox does (OnOutcomes: an event and an
// inbox item naming the old and the new id), not only the sync state.
func TestRepublishRenumberingTellsTheAsker(t *testing.T) {
	mem := &memRemote{chains: map[int][]Commit{}}
	rr := &renumberingRemote{memRemote: mem}
	h := sharedHost(t, rr)
	_, err := sharedAsk(h, "mine")
	require.NoError(t, err)
	var told []Outcome
	h.Replicator.OnOutcomes(func(issue int, outs []Outcome, l *ledger.Ledger) {
		assert.Equal(t, 1, issue)
		for _, o := range outs {
			require.NotNil(t, l.Find(o.As), "the ledger as pulled holds the new id")
		}
		told = append(told, outs...)
	})

	// another host republished: its question is CLR-1-001, this host's is now CLR-1-002
	mine := sharedRecord("CLR-1-002", "mine")
	mine.From = "ux"
	republished := &ledger.Ledger{IssueNumber: 1, Clarifications: []*ledger.Clarification{sharedRecord("CLR-1-001", "theirs"), mine}}
	data, err := ledger.Encode(republished)
	require.NoError(t, err)
	mem.mu.Lock()
	mem.chains[1] = append(mem.chains[1], Commit{Data: data, Message: "republished"})
	rr.renumbered = map[string]string{"CLR-1-001": "CLR-1-002"}
	mem.mu.Unlock()

	_, err = h.Replicator.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	require.Len(t, told, 1)
	assert.Equal(t, OutcomeRenumbered, told[0].Outcome)
	assert.Equal(t, "CLR-1-001", told[0].ID)
	assert.Equal(t, "CLR-1-002", told[0].As)
	assert.Equal(t, "ux", told[0].By, "the asker of the question as it now stands")
}
