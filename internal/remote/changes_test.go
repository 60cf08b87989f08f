package remote

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// pulledLog records what OnPulled tells, as "ID status threadBefore>threadAfter".
type pulledLog struct {
	mu  sync.Mutex
	got []string
}

func (p *pulledLog) listen(s *Replicator) {
	s.OnPulled(func(issue int, changes []Pulled) {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range changes {
			was := 0
			if c.Before != nil {
				was = len(c.Before.Thread)
			}
			p.got = append(p.got, c.After.ID+" "+string(c.After.Status)+" "+string(rune('0'+was))+">"+string(rune('0'+len(c.After.Thread))))
		}
	})
}

func (p *pulledLog) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := p.got
	p.got = nil
	return got
}

// A host is told once of each change another host made, never of its own,
// whether it pulls it by a sync or by a write of its own; processes
// syncing at once are told once between them.
func TestPulledOncePerChange(t *testing.T) {
	r := &memRemote{chains: map[int][]Commit{}}
	a, b := sharedHost(t, r), sharedHost(t, r)
	var la, lb pulledLog
	la.listen(a.Replicator)
	lb.listen(b.Replicator)

	id, err := sharedAsk(a, "TTL?")
	require.NoError(t, err)
	assert.Empty(t, la.take(), "its own change")
	_, err = b.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"CLR-1-001 pending 0>1"}, lb.take(), "new to b")

	require.NoError(t, sharedAnswer(b, id, "five minutes"))
	assert.Empty(t, lb.take())

	// many processes of host a (stores on one state directory) sync at once
	var wg sync.WaitGroup
	for range 4 {
		s := Attach(ledger.NewStore(a.Dir(), lock.Options{}, nil), r)
		la.listen(s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Sync(context.Background(), 1, nil)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.Equal(t, []string{"CLR-1-001 answered 1>2"}, la.take(), "once between them")
	_, err = a.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	assert.Empty(t, la.take(), "nothing new")

	// a asks offline while b asks: a's queued question is not b's change;
	// b's is pulled by a's next write, which delivers the outbox
	r.offline = true
	_, err = sharedAsk(a, "from a, offline")
	require.NoError(t, err)
	r.offline = false
	_, err = sharedAsk(b, "from b")
	require.NoError(t, err)
	_, err = sharedAsk(a, "from a, online")
	require.NoError(t, err)
	assert.Equal(t, []string{"CLR-1-002 pending 0>1"}, la.take(), "b's question, under the id it has on the remote")
	_, err = b.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"CLR-1-003 pending 0>1", "CLR-1-004 pending 0>1"}, lb.take())
}
