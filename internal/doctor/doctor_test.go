package doctor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

var t0 = time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)

func TestEmbeddedSchemaIsTheInteropOne(t *testing.T) {
	want, err := os.ReadFile("../../testdata/interop/agentx-clarification-ledger.schema.json")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(LedgerSchema))
}

func TestValidateSchema(t *testing.T) {
	good, err := os.ReadFile("../../testdata/interop/issue-0.json")
	require.NoError(t, err)
	require.NoError(t, ValidateSchema(good))

	var doc map[string]any
	require.NoError(t, json.Unmarshal(good, &doc))
	rec := doc["clarifications"].([]any)[0].(map[string]any)
	rec[ledger.ExtraKey] = map[string]any{"workflow": "feature"}
	withExtra, _ := json.Marshal(doc)
	assert.NoError(t, ValidateSchema(withExtra), "agentx's own key is left out of the check")

	rec["status"] = "bogus"
	bad, _ := json.Marshal(doc)
	assert.ErrorContains(t, ValidateSchema(bad), "/clarifications/0/status")

	roundZero, err := os.ReadFile("../../testdata/interop/round-zero.json")
	require.NoError(t, err)
	assert.Regexp(t, `/clarifications/0/(round|thread): `, ValidateSchema(roundZero).Error(), "round 0 with an empty thread breaks two rules; either is reported")

	over999, err := os.ReadFile("../../testdata/interop/seq-over-999.json")
	require.NoError(t, err)
	assert.NoError(t, ValidateSchema(over999), "CLR-N-1000 and beyond are a documented deviation, not a problem")
	rec["status"] = "pending"
	rec["id"] = "CLR-0-01"
	shortID, _ := json.Marshal(doc)
	assert.ErrorContains(t, ValidateSchema(shortID), "/clarifications/0/id", "other bad ids still fail")
}

func write(t *testing.T, path, content string, mod time.Time) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	require.NoError(t, os.Chtimes(path, mod, mod))
}

func kinds(r *Report) map[string]string {
	out := map[string]string{}
	for _, f := range r.Findings {
		fixed := "open"
		if f.Fixed {
			fixed = "fixed"
		}
		out[filepath.Base(f.Path)] = f.Check + " " + f.Severity + " " + fixed
	}
	return out
}

// TestDoctor builds a workspace with one of each problem, runs the doctor,
// then runs it with --fix: everything but the corrupt ledger is repaired,
// and a second --fix run finds only that.
func TestDoctor(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	dir := t.TempDir()
	s := ledger.NewStore(dir, lock.Options{}, func() time.Time { return t0 })
	_, _, err := s.RebuildIndex(ctx) // as init does
	require.NoError(t, err)
	for _, n := range []int{1, 2} {
		_, err := s.Update(ctx, n, func(l *ledger.Ledger) error {
			l.Clarifications = append(l.Clarifications, &ledger.Clarification{
				ID: l.NextID(), From: "engineer", To: "architect", Topic: "t", Blocking: true, Status: ledger.Pending,
				Round: 1, MaxRounds: 5, Created: ledger.T(t0), StaleAfter: ledger.T(t0),
				Thread: []ledger.ThreadEntry{{Round: 1, From: "engineer", Type: ledger.Question, Body: "q", Timestamp: ledger.T(t0)}},
			})
			return nil
		})
		require.NoError(t, err)
	}
	clean, err := Run(ctx, s, Options{Now: time.Now})
	require.NoError(t, err)
	assert.Empty(t, clean.Findings, "a fresh workspace is healthy")
	assert.Equal(t, 2, clean.Ledgers)
	assert.Equal(t, 2, clean.Open)

	// the index file of issue 2 forgets its question while naming its
	// ledger's version (a damaged derived file; a missing one is no harm:
	// readers read the ledger)
	ixf, err := os.ReadFile(s.IssueIndexPath(2))
	require.NoError(t, err)
	forgot := regexp.MustCompile(`"entries":\[.*\]}\s*$`).ReplaceAll(ixf, []byte(`"entries":[]}`))
	require.NotEqual(t, string(ixf), string(forgot))
	require.NoError(t, os.WriteFile(s.IssueIndexPath(2), forgot, 0o644))
	s = ledger.NewStore(dir, lock.Options{}, func() time.Time { return t0 }) // a doctor is a process of its own
	// a lock left by a process on another host, an hour ago
	old := now.Add(-time.Hour).UTC().Format(time.RFC3339)
	write(t, s.Path(1)+".lock", `{"pid":1,"host":"elsewhere","agent":"x","token":"t","timestamp":"`+old+`","created":"`+old+`"}`, now.Add(-time.Hour))
	// a lock held right now by this process: not stale, however old its
	// date looks to the doctor's clock
	held, err := lock.Acquire(t.Context(), s.Path(2), lock.Options{})
	require.NoError(t, err)
	defer held.Release()
	// temp files: one a killed writer left long ago, one that may be in use
	write(t, filepath.Join(filepath.Dir(s.Path(1)), ".issue-1.json.tmp-123"), "{", now.Add(-time.Hour))
	write(t, filepath.Join(filepath.Dir(s.Path(1)), ".issue-2.json.tmp-456"), "{", now)
	// a large ledger's shadow, whatever its age, is no leftover; the
	// shadow of a ledger that is gone is reported, and never removed
	write(t, filepath.Join(filepath.Dir(s.Path(1)), ".issue-1.json.tmp-shadow"), "{", now.Add(-time.Hour))
	write(t, filepath.Join(filepath.Dir(s.Path(1)), ".issue-8.json.tmp-shadow"), "{}", now.Add(-time.Hour))
	// a ledger that no longer parses, and one from another AgentX tool that bends the schema
	write(t, s.Path(3), `{"issueNumber": 3, "clarifications": [`, now)
	roundZero, err := os.ReadFile("../../testdata/interop/round-zero.json")
	require.NoError(t, err)
	write(t, s.Path(9), string(roundZero), now)

	r, err := Run(ctx, s, Options{Now: time.Now})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"index":                    "index error open",
		"issue-1.json.lock":        "lock error open",
		".issue-1.json.tmp-123":    "temp error open",
		".issue-2.json.tmp-456":    "temp warning open",
		".issue-8.json.tmp-shadow": "temp warning open",
		"issue-3.json":             "ledger error open",
		"issue-9.json":             "schema warning open",
	}, kinds(r))
	assert.Equal(t, 4, r.Remaining)
	assert.FileExists(t, s.Path(1)+".lock", "without --fix nothing is touched")

	r, err = Run(ctx, s, Options{Now: time.Now, Fix: true})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"index":                    "index error fixed",
		"issue-1.json.lock":        "lock error fixed",
		".issue-1.json.tmp-123":    "temp error fixed",
		".issue-2.json.tmp-456":    "temp warning open",
		".issue-8.json.tmp-shadow": "temp warning open",
		"issue-3.json":             "ledger error open",
		"issue-9.json":             "schema warning open",
	}, kinds(r))
	assert.Equal(t, 1, r.Remaining, "the corrupt ledger is never rewritten")
	assert.FileExists(t, filepath.Join(filepath.Dir(s.Path(1)), ".issue-8.json.tmp-shadow"), "a shadow may be all that is left of a ledger")
	assert.NoFileExists(t, s.Path(1)+".lock")
	assert.FileExists(t, s.Path(2)+".lock", "a live lock is left alone")
	got, err := os.ReadFile(s.Path(3))
	require.NoError(t, err)
	assert.Equal(t, `{"issueNumber": 3, "clarifications": [`, string(got))
	ix, _, err := s.ReadIndex()
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 9}, ix.OpenIssues())

	r, err = Run(ctx, s, Options{Now: time.Now, Fix: true})
	require.NoError(t, err)
	assert.Equal(t, 1, r.Remaining)
	assert.Len(t, r.Findings, 4, "only the corrupt ledger and the three warnings remain")
}

// TestFixLeavesALiveWritersTempFiles: a temp file written under a lock an
// agentx process holds is that writer's, however old it looks to the
// doctor's clock (here an hour ahead): doctor --fix leaves it, and removes
// it once the lock is free.
func TestFixLeavesALiveWritersTempFiles(t *testing.T) {
	ctx := context.Background()
	s := ledger.NewStore(t.TempDir(), lock.Options{}, func() time.Time { return t0 })
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	dir := filepath.Dir(s.Path(4))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	temps := []string{filepath.Join(dir, ".issue-4.json.tmp-locked"), s.Path(4) + ".lock.tmp-held"}
	held, err := lock.Acquire(t.Context(), s.Path(4), lock.Options{})
	require.NoError(t, err)
	for _, p := range temps {
		write(t, p, "{", time.Now())
	}
	// Without --fix doctor says the same: a live writer's, a warning.
	r, err := Run(ctx, s, Options{Now: ahead})
	require.NoError(t, err)
	for _, f := range r.Findings {
		if f.Check == CheckTemp {
			assert.Equal(t, Warning, f.Severity, f.Path)
			assert.Equal(t, "left alone", f.Action)
		}
	}
	r, err = Run(ctx, s, Options{Now: ahead, Fix: true})
	require.NoError(t, err)
	for _, p := range temps {
		assert.FileExists(t, p, "a live writer's file is left alone")
	}
	found := 0
	for _, f := range r.Findings {
		if f.Check == CheckTemp {
			found++
			assert.Equal(t, "left alone", f.Action)
			assert.False(t, f.Fixed)
		}
	}
	assert.Equal(t, 2, found)

	require.NoError(t, held.Release())
	_, err = Run(ctx, s, Options{Now: ahead, Fix: true})
	require.NoError(t, err)
	for _, p := range temps {
		assert.NoFileExists(t, p, "once the lock is free, the leftover goes")
	}
}

// TestFixMakesNoLockForUnlockedTemps: an old temp file of a writer that
// takes no lock (a random name) is removed by its age, with no lock file
// or queue file made for it.
func TestFixMakesNoLockForUnlockedTemps(t *testing.T) {
	s := ledger.NewStore(t.TempDir(), lock.Options{}, func() time.Time { return t0 })
	ix := filepath.Join(s.Dir(), ledger.IndexDir)
	require.NoError(t, os.MkdirAll(ix, 0o755))
	tmp := filepath.Join(ix, ".issue-7.json.tmp-99")
	write(t, tmp, "{", time.Now())
	_, err := Run(context.Background(), s, Options{Now: func() time.Time { return time.Now().Add(time.Hour) }, Fix: true})
	require.NoError(t, err)
	assert.NoFileExists(t, tmp)
	left, _ := filepath.Glob(filepath.Join(ix, "*.lock*"))
	assert.Empty(t, left, "no lock or queue file made beside it")
}

func TestTempLock(t *testing.T) {
	for p, want := range map[string]string{
		"/s/clarifications/issue-7.json.lock.tmp-held": "/s/clarifications/issue-7.json.lock",
		"/s/clarifications/issue-7.json.lock.tmp-123":  "/s/clarifications/issue-7.json.lock",
		"/s/clarifications/.issue-7.json.tmp-locked":   "/s/clarifications/issue-7.json.lock",
		"/s/index/.issue-7.json.tmp-99":                "",
		"/s/index/.issue-7.json.tmp-locked":            "/s/clarifications/issue-7.json.lock",
		"/s/ledgers/.issue-7.layout.tmp-locked":        "/s/clarifications/issue-7.json.lock",
		"/s/monitor/.digest.tmp-5":                     "",
		"/s/agent-status.json.lock.tmp-held":           "/s/agent-status.json.lock",
		"/s/.agent-status.json.tmp-locked":             "/s/agent-status.json.lock",
	} {
		assert.Equal(t, want, tempLock(p), p)
	}
}

// TestLookMakesNoQueueFile: doctor without --fix writes nothing, not even
// the queue file it would look at: an old temp file whose lock nobody
// ever queued on is a killed writer's, reported as such.
func TestLookMakesNoQueueFile(t *testing.T) {
	s := ledger.NewStore(t.TempDir(), lock.Options{}, func() time.Time { return t0 })
	dir := filepath.Dir(s.Path(9))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, ".issue-9.json.tmp-locked")
	write(t, p, "{", time.Now())
	r, err := Run(context.Background(), s, Options{Now: func() time.Time { return time.Now().Add(time.Hour) }})
	require.NoError(t, err)
	found := false
	for _, f := range r.Findings {
		if f.Check == CheckTemp {
			found = true
			assert.Equal(t, Error, f.Severity)
			assert.Equal(t, "agentx doctor --fix removes it", f.Action)
		}
	}
	assert.True(t, found)
	assert.FileExists(t, p)
	assert.NoFileExists(t, s.Path(9)+lock.Suffix+lock.QueueSuffix, "nothing made by looking")
}
