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
	moves int
	tries int
	saved map[string][]byte // versions that are no longer on the chain
}

func (m *racingRemote) Read(_ context.Context, issue int, sha string) (Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if data, ok := m.saved[sha]; ok {
		return Snapshot{Version: sha, Data: data}, nil
	}
	return Snapshot{}, fmt.Errorf("issue %d: no version %s", issue, sha)
}

func (m *racingRemote) ForkPoint(context.Context, string, string) (string, error) { return "", nil }

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
