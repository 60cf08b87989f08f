package remote_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapAcrossHosts: one agent asking from four hosts at once on a busy
// issue never ends over its max_questions. Each host's ask is checked on
// its local copy, which may be behind (an intent is made on it); the merge
// checks the cap again on the shared ledger, and an ask past it is
// refused (exit 4, rejected) after all, with nothing of it on the remote.
// Before, up to one question per host landed whatever the cap.
func TestCapAcrossHosts(t *testing.T) {
	const hosts, max = 4, 2
	w := newWorld(t, hosts, "", "")
	// Every host writes after another's change: the issue is busy for
	// each (another agent's questions, which the cap does not count).
	for round := range 2 {
		for h := range hosts {
			q := fmt.Sprintf("warm-%d-%d", round, h)
			r := w.run(h, "", "clarify", "ask", "--issue", "1", "--from", "architect", "--to", "product-manager", "--topic", q, "--question", q, "--non-blocking", "--json")
			require.Equal(t, 0, r.code, r.stderr)
		}
	}
	for _, h := range w.hosts {
		cfg := filepath.Join(h, ".agentx", "config.toml")
		data, err := os.ReadFile(cfg)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(cfg, []byte(strings.Replace(string(data), "\nmax_questions = 0", fmt.Sprintf("\nmax_questions = %d", max), 1)), 0o644))
	}

	var mu sync.Mutex
	var acked []string
	refused := 0
	var wg sync.WaitGroup
	for h := range hosts {
		for k := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q := fmt.Sprintf("capped-%d-%d", h, k)
				r := w.run(h, "", "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", q, "--question", q, "--non-blocking", "--json")
				mu.Lock()
				defer mu.Unlock()
				switch r.code {
				case 0:
					acked = append(acked, data(t, r.stdout)["id"].(string))
				case 4:
					assert.Contains(t, r.stderr, "max_questions")
					refused++
				default:
					t.Errorf("host %d: exit %d: %s", h, r.code, r.stderr)
				}
			}()
		}
	}
	wg.Wait()
	require.Equal(t, 0, w.run(0, "", "sync").code)
	last := checkChain(t, w.chain(1))
	n := 0
	for _, c := range last.Clarifications {
		if c.From == "engineer" {
			n++
			assert.Contains(t, acked, c.ID, "%s landed, so its ask was acknowledged", c.ID)
		}
	}
	t.Logf("%d asks acknowledged, %d refused by the cap", len(acked), refused)
	assert.Equal(t, max, n, "the cap holds across hosts")
	assert.Len(t, acked, max)
	assert.Equal(t, hosts*2-max, refused)
}
