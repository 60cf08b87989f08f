package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

// TestDoctorStateFiles: the files beside the ledgers. Each that does not
// parse is an error (it blocks whatever writes it); --fix moves it aside,
// its content kept, and the writer works again. A symbolic link is reported,
// never followed or removed. A torn last event line is ended; malformed
// event lines are reported, the log never rewritten.
func TestDoctorStateFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := ledger.NewStore(dir, lock.Options{}, func() time.Time { return t0 })
	_, _, err := s.RebuildIndex(ctx)
	require.NoError(t, err)
	h := router.New(s, nil, dir)
	_, err = h.Hook(ctx, router.HookStart, "engineer", 7)
	require.NoError(t, err)
	require.NoError(t, h.Events.Append(router.Event{Type: router.EventRequested, ClarificationID: "CLR-7-001", IssueNumber: 7, FromAgent: "engineer", ToAgent: "architect"}))
	clean, err := Run(ctx, s, Options{Now: time.Now})
	require.NoError(t, err)
	require.Empty(t, clean.Findings, "hook records, agent-status.json and an event log that parse are healthy")

	now := time.Now()
	bad := "{\n  \"engineer\": {\"status\": 7}\n}\n"
	write(t, s.AgentStatusPath(), bad, now)
	write(t, filepath.Join(dir, router.HooksFile(7)), bad, now)
	write(t, filepath.Join(dir, inbox.StateFile("architect")), `{"offset": "x"}`, now)
	outside := filepath.Join(t.TempDir(), "target.json")
	write(t, outside, "{}", now)
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, inbox.StateFile("engineer"))))
	events := filepath.Join(dir, router.EventsFile)
	log, err := os.ReadFile(events)
	require.NoError(t, err)
	write(t, events, string(log)+"not an event\n"+`{"type":"requested","clarificationId":"CLR-7-0`, now)

	r, err := Run(ctx, s, Options{Now: time.Now})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"agent-status.json": "status error open",
		"issue-7.json":      "status error open",
		"architect.json":    "inbox error open",
		"engineer.json":     "inbox error open",
		"events.jsonl":      "events warning open",
	}, kinds(r))
	assert.Equal(t, 4, r.Remaining)
	for _, f := range r.Findings {
		switch filepath.Base(f.Path) {
		case "issue-7.json":
			assert.Contains(t, f.Problem, "line 2, column 27: cannot be parsed")
			assert.Contains(t, f.Action, "until then agentx hook on #7 fails")
		case "engineer.json":
			assert.Contains(t, f.Problem, "is a symbolic link to "+outside)
		}
	}
	var ev []string
	for _, f := range r.Findings {
		if f.Check == CheckEvents {
			ev = append(ev, f.Problem)
		}
	}
	assert.Len(t, ev, 2, "a malformed line and a torn last line")
	_, err = h.Hook(ctx, router.HookStart, "engineer", 7)
	require.Error(t, err, "a hook record that does not parse blocks the hook")

	r, err = Run(ctx, s, Options{Now: time.Now, Fix: true})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"agent-status.json": "status error fixed",
		"issue-7.json":      "status error fixed",
		"architect.json":    "inbox error fixed",
		"engineer.json":     "inbox error open",
		"events.jsonl":      "events warning fixed",
	}, kinds(r))
	assert.Equal(t, 1, r.Remaining, "the link needs a person")
	got, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(got), "the link's target is untouched")
	aside, err := filepath.Glob(filepath.Join(dir, router.HooksDir, "issue-7.json.corrupt-*"))
	require.NoError(t, err)
	require.Len(t, aside, 1)
	kept, err := os.ReadFile(aside[0])
	require.NoError(t, err)
	assert.Equal(t, bad, string(kept), "moved aside, not lost")
	tail, err := os.ReadFile(events)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(tail), `"CLR-7-0`+"\n"), "the torn line is ended, nothing else changed")

	_, err = h.Hook(ctx, router.HookStart, "engineer", 7)
	require.NoError(t, err, "after --fix the hook works again")
	require.NoError(t, os.Remove(filepath.Join(dir, inbox.StateFile("engineer"))))
	r, err = Run(ctx, s, Options{Now: time.Now, Fix: true})
	require.NoError(t, err)
	assert.Equal(t, 0, r.Remaining)
	assert.Equal(t, map[string]string{"events.jsonl": "events warning open"}, kinds(r), "only the malformed line stays reported")
}

// TestDoctorRemoteOutbox: a remote-mode sync state (the outbox of changes
// acknowledged but not yet published) that does not parse is reported and
// never moved aside or rewritten, with or without --fix.
func TestDoctorRemoteOutbox(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := ledger.NewStore(dir, lock.Options{}, func() time.Time { return t0 })
	_, _, err := s.RebuildIndex(ctx)
	require.NoError(t, err)
	write(t, remote.SyncPath(s, 7), `{"head": "abc", "pending": [`, time.Now())
	for _, fix := range []bool{false, true} {
		r, err := Run(ctx, s, Options{Now: time.Now, Fix: fix})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"issue-7.json": "remote error open"}, kinds(r))
		assert.Contains(t, r.Findings[0].Action, "never overwrites it")
		got, err := os.ReadFile(remote.SyncPath(s, 7))
		require.NoError(t, err)
		assert.Equal(t, `{"head": "abc", "pending": [`, string(got))
	}
}
