//go:build unix

package router

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// waiting answers once the file "go" exists, having said it started: the
// test acts while it runs.
const waiting = `#!/bin/sh
touch started
while [ ! -f go ]; do sleep 0.02; done
echo "Late answer."
`

// TestResponderSupersededWhileItRuns: while a real responder runs, the
// clarification moves on (a person answers it; the asker cancels it);
// the responder's answer is then recorded nowhere, and Ask returns the
// record as it stands with the superseded outcome, and an event.
func TestResponderSupersededWhileItRuns(t *testing.T) {
	tests := []struct {
		name   string
		act    func(h *Hub, id string) error
		status ledger.Status
		detail string
	}{
		{"a person answers", func(h *Hub, id string) error {
			_, err := h.Answer(context.Background(), id, ledger.Human, "SQLite, decided.")
			return err
		}, ledger.Answered, "the architect responder answered, but CLR-42-001 was answered while its responder ran; that was not recorded"},
		{"the asker cancels", func(h *Hub, id string) error {
			_, err := h.Cancel(context.Background(), id, "engineer")
			return err
		}, ledger.Abandoned, "the architect responder answered, but CLR-42-001 was abandoned while its responder ran; that was not recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newTestHub(t, "[agents.architect]\ncommand = [\"./architect.sh\"]\ntimeout = \"20s\"\n")
			h.Runner = ExecRunner{Dir: h.Dir}
			require.NoError(t, os.WriteFile(filepath.Join(h.Dir, "architect.sh"), []byte(waiting), 0o755))
			done := make(chan error, 1)
			go func() {
				for {
					if _, err := os.Stat(filepath.Join(h.Dir, "started")); err == nil {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				err := tt.act(h, "CLR-42-001")
				_ = os.WriteFile(filepath.Join(h.Dir, "go"), nil, 0o644)
				done <- err
			}()
			rec, err := h.Ask(context.Background(), askReq("engineer", "architect"))
			require.NoError(t, err, "the asker gets its id, not an error")
			require.NoError(t, <-done)
			assert.Equal(t, "CLR-42-001", rec.ID)
			assert.Equal(t, OutcomeSuperseded, rec.Outcome)
			assert.Equal(t, tt.status, rec.Status, "the record as it stands")
			assert.Equal(t, tt.detail, rec.Detail)
			c, err := h.Store.Get(rec.ID)
			require.NoError(t, err)
			for _, e := range c.Thread {
				assert.NotEqual(t, "Late answer.", e.Body, "the late answer is recorded nowhere")
			}
			types := eventTypes(t, h, rec.ID)
			assert.Equal(t, EventSuperseded, types[len(types)-1])
		})
	}
}
