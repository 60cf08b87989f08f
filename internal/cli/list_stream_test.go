package cli

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/monitor"
	"github.com/agentx-cli/agentx/router"
)

// TestEmitEachIsEmit: clarify list writes its records as it reads them,
// and what it writes is what it wrote when it kept them all: under --json
// the document emit prints, byte for byte (no records, one, several; with
// and without the side monitor's findings after the data), and in text
// the lines and the table renderList prints.
func TestEmitEachIsEmit(t *testing.T) {
	rec := hostileRecord()
	other := hostileRecord()
	other.IssueNumber, other.Topic = 43, "plain <b>&</b>"
	sides := []*sideMonitor{nil, {ran: true, report: &monitor.Report{Findings: []monitor.Finding{hostileFinding()}}}}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, recs := range [][]router.Record{{}, {rec}, {rec, other, rec}} {
		for _, side := range sides {
			for _, mode := range []struct{ json, tty bool }{{true, false}, {false, false}, {false, true}} {
				var want, got bytes.Buffer
				a := &App{stdout: &want, globalFlags: globalFlags{json: mode.json, noColor: true}, isTTY: mode.tty, sideWork: sideWork{side: side}, getenv: func(string) string { return "" }}
				require.NoError(t, a.emit(recs, func() { renderList(a.stdout, recs, now, a.isTTY, a.paint) }))
				if mode.json && side != nil {
					require.Contains(t, want.String(), `"monitor": {`, "members after the data")
				}

				a.stdout = &got
				lw := newListWriter(a.stdout, now, a.isTTY, a.paint)
				err := emitEach(a, func(put func(router.Record) error) error {
					for _, r := range recs {
						if err := put(r); err != nil {
							return err
						}
					}
					return nil
				}, func(r router.Record) error { lw.add(r); return nil }, func() { _ = lw.flush() })
				require.NoError(t, err)
				assert.Equal(t, want.String(), got.String(), "%d records, json %v, tty %v, side %v", len(recs), mode.json, mode.tty, side != nil)
			}
		}
	}

	// A failure before the first record leaves stdout to the error document.
	var out bytes.Buffer
	a := &App{stdout: &out, globalFlags: globalFlags{json: true}, getenv: func(string) string { return "" }}
	boom := errors.New("boom")
	err := emitEach(a, func(func(router.Record) error) error { return boom }, nil, nil)
	assert.ErrorIs(t, err, boom)
	assert.Empty(t, out.String())
}
