package inbox

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/router"
)

// benchWorld is a workspace whose event log holds n lines for others.
func benchWorld(b *testing.B, n int) *world {
	w := newWorld(b)
	line, err := json.Marshal(router.Event{Type: router.EventStale, ClarificationID: "CLR-9-001", IssueNumber: 9, FromAgent: "x", ToAgent: "y", Round: 1})
	require.NoError(b, err)
	line = append(line, '\n')
	require.NoError(b, os.MkdirAll(filepath.Dir(w.hub.Events.Path), 0o755))
	require.NoError(b, os.WriteFile(w.hub.Events.Path, bytes.Repeat(line, n), 0o644))
	return w
}

// BenchmarkLook measures a look on a 100,000-line log: the first reads it
// all; later ones read only what was appended.
func BenchmarkLook(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		news bool // one new question for the agent before each look
	}{{"nothing new", false}, {"one new question", true}} {
		b.Run(bc.name, func(b *testing.B) {
			w := benchWorld(b, 100_000)
			_, err := Check(ctx, w.hub.Store, Options{Agent: "architect"})
			require.NoError(b, err)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if bc.news {
					b.StopTimer()
					_, err := w.hub.Ask(ctx, router.AskRequest{Issue: 1, From: "engineer", To: "architect", Topic: "t", Question: "q?"})
					require.NoError(b, err)
					b.StartTimer()
				}
				res, err := Check(ctx, w.hub.Store, Options{Agent: "architect"})
				require.NoError(b, err)
				if bc.news && len(res.Items) != 1 {
					b.Fatalf("got %d items", len(res.Items))
				}
			}
		})
	}
	b.Run("first look", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			w := benchWorld(b, 100_000)
			b.StartTimer()
			_, err := Check(ctx, w.hub.Store, Options{Agent: "architect"})
			require.NoError(b, err)
		}
	})
}
