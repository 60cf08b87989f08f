package remote

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
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
// ledger it was made on, and changes nothing there.
func TestIntentChange(t *testing.T) {
	enc := func(recs ...*ledger.Clarification) []byte {
		data, err := ledger.Encode(&ledger.Ledger{IssueNumber: 1, Clarifications: recs})
		require.NoError(t, err)
		return data
	}
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
	_, ok = intentChange(1, Intent{Name: "n"})
	assert.False(t, ok, "an intent that could not be read")
}

// TestIntentTooOldIsRemovedUnmerged: an intent posted longer ago than
// intentLife (its host killed, the question never acknowledged) is removed
// unmerged, so a question nobody was told was asked cannot appear much
// later; a young one beside it is merged, under the next free id, its
// subject naming the host that posted it.
func TestIntentTooOldIsRemovedUnmerged(t *testing.T) {
	enc := func(recs ...*ledger.Clarification) []byte {
		data, err := ledger.Encode(&ledger.Ledger{IssueNumber: 1, Clarifications: recs})
		require.NoError(t, err)
		return data
	}
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
