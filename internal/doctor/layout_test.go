package doctor

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// TestDoctorLayoutMemo: a large ledger's layout memo that lies about a
// record (here its status), with the ledger's stamp, is reported, and
// --fix removes it; a true one is not reported.
func TestDoctorLayoutMemo(t *testing.T) {
	ctx := context.Background()
	s := ledger.NewStore(t.TempDir(), lock.Options{}, func() time.Time { return t0 })
	_, _, err := s.RebuildIndex(ctx)
	require.NoError(t, err)
	body := strings.Repeat("How should the exporter name its files? ", 20)
	_, err = s.Update(ctx, 4, func(l *ledger.Ledger) error {
		for range 300 {
			now := ledger.T(t0)
			l.Clarifications = append(l.Clarifications, &ledger.Clarification{
				ID: l.NextID(), From: "engineer", To: "architect", Topic: "t", Status: ledger.Resolved,
				Round: 1, MaxRounds: 5, Created: now, StaleAfter: now, ResolvedAt: &now,
				Thread: []ledger.ThreadEntry{{Round: 1, From: "engineer", Type: ledger.Question, Body: body, Timestamp: now}},
			})
		}
		return nil
	})
	require.NoError(t, err)
	memo := s.LayoutPath(4)
	require.FileExists(t, memo)
	r, err := Run(ctx, s, Options{})
	require.NoError(t, err)
	assert.Empty(t, r.Findings, "a true memo is not reported")

	// The memo: a magic line, the issue, the file's stamp (five varints),
	// where the first record starts, the shadow's vouched bytes (and their
	// file's stamp), the senders (one), how many records,
	// then each record's length and status code. Make the first record
	// pending (code 0) while the ledger says resolved.
	data, err := os.ReadFile(memo)
	require.NoError(t, err)
	at := bytes.IndexByte(data, '\n') + 1
	for range 7 {
		_, n := binary.Varint(data[at:])
		require.Positive(t, n)
		at += n
	}
	held, n := binary.Varint(data[at:]) // the shadow's bytes the memo vouches for, and its stamp if any
	require.Positive(t, n)
	at += n
	if held > 0 {
		for range 4 {
			_, n := binary.Varint(data[at:])
			require.Positive(t, n)
			at += n
		}
	}
	_, n = binary.Uvarint(data[at:]) // the sender's name
	at += n + len("engineer")
	_, n = binary.Uvarint(data[at:]) // the records
	at += n
	_, n = binary.Varint(data[at:]) // the first one's length
	at += n
	require.Equal(t, byte(4), data[at], "resolved is code 4")
	data[at] = 0
	require.NoError(t, os.WriteFile(memo, data, 0o644))

	r, err = Run(ctx, s, Options{})
	require.NoError(t, err)
	require.Len(t, r.Findings, 1)
	f := r.Findings[0]
	assert.Equal(t, CheckLayout, f.Check)
	assert.Equal(t, memo, f.Path)
	assert.Contains(t, f.Problem, "CLR-4-001 from engineer, resolved")
	assert.Equal(t, 1, r.Remaining)

	r, err = Run(ctx, s, Options{Fix: true})
	require.NoError(t, err)
	require.Len(t, r.Findings, 1)
	assert.True(t, r.Findings[0].Fixed)
	assert.Zero(t, r.Remaining)
	assert.NoFileExists(t, memo)
	r, err = Run(ctx, s, Options{})
	require.NoError(t, err)
	assert.Empty(t, r.Findings)
}
