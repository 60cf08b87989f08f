package router

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// refusingReplicator is a Replicator that changes the local file as a
// store without one does, and refuses the ids in refused as a caller's
// (ledger.IDChecker), as remote mode refuses an id renumbered away.
type refusingReplicator struct{ refused map[string]error }

func (refusingReplicator) Prefetch(context.Context, int) (any, error) { return nil, nil }

func (refusingReplicator) Apply(_ context.Context, f *ledger.Locked, fn func(*ledger.Ledger) error, _ any) (*ledger.Ledger, error) {
	l, err := f.Read()
	if err != nil {
		return nil, err
	}
	if err := l.Change(f.Path, fn); err != nil {
		return nil, err
	}
	return l, f.Write(l, nil)
}

func (r refusingReplicator) CheckID(id string) error { return r.refused[id] }

// An id the store's Replicator refuses is refused by every hub call that
// takes it from a caller, before anything is read or written; the hub's
// own work on the ledger's ids (the responder's, the monitor's) is not.
func TestNamedIDRefusedThroughTheHub(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	a, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	b, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	renumbered := errors.New("superseded: renumbered")
	h.Store.SetReplicator(refusingReplicator{refused: map[string]error{a.ID: renumbered}})

	calls := map[string]func() error{
		"get":       func() error { _, err := h.Get(a.ID); return err },
		"wait":      func() error { _, err := h.Wait(ctx, a.ID, time.Millisecond); return err },
		"answer":    func() error { _, err := h.Answer(ctx, a.ID, "architect", "x"); return err },
		"answer-r":  func() error { _, err := h.AnswerReply(ctx, a.ID, "architect", Reply{Body: "x"}); return err },
		"followup":  func() error { _, err := h.Followup(ctx, a.ID, "engineer", "and?"); return err },
		"resolve":   func() error { _, err := h.Resolve(ctx, a.ID, "human", "x"); return err },
		"resolve-r": func() error { _, err := h.ResolveReply(ctx, a.ID, "human", Reply{Body: "x"}); return err },
		"escalate":  func() error { _, err := h.Escalate(ctx, a.ID, "x"); return err },
		"abandon":   func() error { _, err := h.Abandon(ctx, a.ID, "", "x"); return err },
		"cancel":    func() error { _, err := h.Cancel(ctx, a.ID, "engineer"); return err },
		"assume":    func() error { _, err := h.Assume(ctx, a.ID, "engineer", "x"); return err },
		"reuse":     func() error { _, err := h.Reuse(ctx, a.ID, "engineer", b.ID, ""); return err },
		"reuse-of":  func() error { _, err := h.Reuse(ctx, b.ID, "engineer", a.ID, ""); return err },
	}
	for name, call := range calls {
		assert.ErrorIs(t, call(), renumbered, name)
	}
	got, err := h.get(a.ID)
	require.NoError(t, err, "the hub's own read of the ledger's id")
	assert.Equal(t, ledger.Pending, got.Status, "nothing written")

	// Another id goes through, as the Replicator writes it.
	rec, err := h.Answer(ctx, b.ID, "architect", "Use SQLite.")
	require.NoError(t, err)
	assert.Equal(t, ledger.Answered, rec.Status)
}

// twiceReplicator makes each change twice, the first time on a copy it
// throws away, as remote mode does when its first try loses to another
// host; the clock moves a second between the two.
type twiceReplicator struct {
	refusingReplicator
	now *time.Time
}

func (r twiceReplicator) Apply(ctx context.Context, f *ledger.Locked, fn func(*ledger.Ledger) error, p any) (*ledger.Ledger, error) {
	l, err := f.Read()
	if err != nil {
		return nil, err
	}
	if err := l.Change(f.Path, fn); err != nil {
		return nil, err
	}
	*r.now = r.now.Add(time.Second)
	return refusingReplicator{}.Apply(ctx, f, fn, p)
}

// TestAskMadeAgainIsTheSameQuestion: a question made a second time (on
// the shared ledger after a lost race, or after its intent was not found)
// is the same question: asked at the same time, so that every host and a
// republished chain know it as one by what was asked and when.
func TestAskMadeAgainIsTheSameQuestion(t *testing.T) {
	now := t0
	h, _ := newTestHubAt(t, "", &now)
	h.Store.SetReplicator(twiceReplicator{now: &now})
	rec, err := h.Ask(context.Background(), askReq("engineer", "architect"))
	require.NoError(t, err)
	l, err := h.Store.Read(rec.IssueNumber)
	require.NoError(t, err)
	require.Len(t, l.Clarifications, 1)
	assert.True(t, l.Clarifications[0].Created.Equal(t0), "the time the ask was made (%s), not its last making's (%s)", t0, l.Clarifications[0].Created)
}
