package remote_test

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// events reads host i's event log as agentx events --json prints it.
func (w *world) events(i int) []map[string]any {
	w.t.Helper()
	r := w.run(i, "", "events", "--offline", "--json")
	require.Equal(w.t, 0, r.code, r.stderr)
	var doc struct{ Data []map[string]any }
	require.NoError(w.t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	return doc.Data
}

// count counts the events of type t for id, pulled from the remote or not.
func count(evs []map[string]any, t, id string, pulled bool) int {
	n := 0
	for _, e := range evs {
		if e["type"] == t && e["clarificationId"] == id && (e["via"] == "remote") == pulled {
			n++
		}
	}
	return n
}

// TestPulledAnswerReachesInbox: host A asks, host B answers; A's inbox (the
// Claude Code hook) delivers the answer once, and A's event log has it
// once, marked as pulled from the remote with B's host, even with several
// processes on A fetching at once. Each host logs as its own only the
// changes it made.
func TestPulledAnswerReachesInbox(t *testing.T) {
	w := newWorld(t, 2, "", "interval = \"0s\"\n")
	r := w.run(0, "engineer", "clarify", "ask", "--issue", "42", "--to", "architect", "--topic", "Cache", "--question", "Per-key TTL?", "--non-blocking")
	require.Equal(t, 0, r.code, r.stderr)
	r = w.run(1, "architect", "clarify", "answer", "CLR-42-001", "--body", "Per key, five minutes.")
	require.Equal(t, 0, r.code, r.stderr)
	b := w.events(1)
	assert.Equal(t, 1, count(b, "clarification-requested", "CLR-42-001", true), "B pulled A's question")
	assert.Equal(t, 1, count(b, "clarification-answered", "CLR-42-001", false), "B's own answer")
	assert.Zero(t, count(b, "clarification-answered", "CLR-42-001", true))

	// several processes on A fetch at once: the answer is logged once
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := w.run(0, "", "sync")
			assert.Equal(t, 0, r.code, r.stdout+r.stderr)
		}()
	}
	wg.Wait()
	a := w.events(0)
	assert.Equal(t, 1, count(a, "clarification-requested", "CLR-42-001", false))
	assert.Zero(t, count(a, "clarification-requested", "CLR-42-001", true), "A's own question is not pulled back")
	require.Equal(t, 1, count(a, "clarification-answered", "CLR-42-001", true))
	for _, e := range a {
		if e["via"] == "remote" {
			host, _ := os.Hostname()
			if host != "" && !strings.ContainsAny(host, " <>") {
				assert.Equal(t, host, e["host"], "the host of B's commit")
			}
			assert.Equal(t, "architect", e["by"])
		}
	}

	// A's inbox delivers the answer, once
	r = w.run(0, "engineer", "inbox", "--agent", "engineer", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var doc struct {
		Data struct {
			Items []struct{ Kind, ID, Body string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	require.Len(t, doc.Data.Items, 1, r.stdout)
	assert.Equal(t, "answer", doc.Data.Items[0].Kind)
	assert.Equal(t, "Per key, five minutes.", doc.Data.Items[0].Body)
	r = w.run(0, "engineer", "inbox", "--agent", "engineer", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	assert.Empty(t, doc.Data.Items, "delivered once")

	// the inbox fetches by itself (the hook): B resolves, A's event log has it
	r = w.run(1, "engineer", "clarify", "resolve", "CLR-42-001", "--body", "Agreed.")
	require.Equal(t, 0, r.code, r.stderr)
	r = w.run(0, "engineer", "inbox", "--agent", "engineer", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, 1, count(w.events(0), "clarification-resolved", "CLR-42-001", true), "the inbox fetched")
}
