package router

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
)

// helpers are the process helpers of the router tests: the test binary
// re-executed with AGENTX_ROUTER_HELPER=<name> runs helpers[name] instead of
// the tests and exits with its result. Register one from an init func in any
// _test.go file of the package and start it with helperCommand.
var helpers = map[string]func() int{}

// TestMain is the only TestMain of package router; see helpers.
func TestMain(m *testing.M) {
	testenv.QuickRaceExit()
	if name := os.Getenv("AGENTX_ROUTER_HELPER"); name != "" {
		h, ok := helpers[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "router test helper %q is not registered\n", name)
			os.Exit(2)
		}
		os.Exit(h())
	}
	os.Exit(m.Run())
}

// helperCommand is the test binary set to run helpers[name] with extra
// environment variables ("KEY=value").
func helperCommand(name string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "AGENTX_ROUTER_HELPER="+name), env...)
	return cmd
}

func init() {
	helpers["events-append"] = eventsAppendHelper
}

// eventsAppendHelper appends AGENTX_EVENTS_N events with ~3 KB topics to
// the log AGENTX_EVENTS_PATH, as writer AGENTX_EVENTS_WRITER.
func eventsAppendHelper() int {
	log := EventLog{Path: os.Getenv("AGENTX_EVENTS_PATH")}
	n, _ := strconv.Atoi(os.Getenv("AGENTX_EVENTS_N"))
	w, _ := strconv.Atoi(os.Getenv("AGENTX_EVENTS_WRITER"))
	for i := 0; i < n; i++ {
		if err := log.Append(bigEvent(w, i)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// bigEvent is writer w's i-th event: its topic is ~3 KB of one letter per
// writer, so an interleaved write would show as a mixed or broken line.
func bigEvent(w, i int) Event {
	return Event{
		Type: EventRequested, ClarificationID: ledger.FormatID(w, i+1), IssueNumber: w, FromAgent: "engineer", ToAgent: "architect",
		Topic: strings.Repeat(string(rune('a'+w)), 3000), Round: i, By: "writer-" + strconv.Itoa(w),
		Timestamp: ledger.T(time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)),
	}
}

var evT0 = time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)

func clar(id, from, to string, round int) *ledger.Clarification {
	return &ledger.Clarification{ID: id, From: from, To: to, Topic: "topic of " + id, Blocking: true, Status: ledger.Pending, Round: round}
}

// TestEventFor: an event copies the clarification's identity and state.
func TestEventFor(t *testing.T) {
	now := time.Date(2026, 2, 26, 11, 30, 0, 123e6, time.FixedZone("CET", 3600))
	e := EventFor(EventAnswered, 42, clar("CLR-42-001", "engineer", "architect", 2), now)
	assert.Equal(t, Event{Type: EventAnswered, ClarificationID: "CLR-42-001", IssueNumber: 42, FromAgent: "engineer", ToAgent: "architect",
		Topic: "topic of CLR-42-001", Blocking: true, Round: 2, Timestamp: ledger.T(now)}, e)
	assert.Equal(t, "2026-02-26T10:30:00.123Z", e.Timestamp.String(), "UTC")
	assert.Equal(t, Event{Type: EventStale, IssueNumber: 7, Timestamp: ledger.T(now)}, EventFor(EventStale, 7, nil, now))
}

// TestEventJSON: the wire form, field names and order, fixed; by and
// reason left out when empty; every line starts with {"type":".
func TestEventJSON(t *testing.T) {
	e := EventFor(EventRequested, 42, clar("CLR-42-001", "engineer", "architect", 1), evT0)
	b, err := json.Marshal(e)
	require.NoError(t, err)
	assert.Equal(t, `{"type":"clarification-requested","clarificationId":"CLR-42-001","issueNumber":42,"fromAgent":"engineer","toAgent":"architect","topic":"topic of CLR-42-001","blocking":true,"round":1,"timestamp":"2026-02-26T10:00:00.000Z"}`, string(b))
	e.By, e.Reason = "monitor", "no answer in 30m"
	b, err = json.Marshal(e)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(b, []byte(`{"type":"`)))
	assert.True(t, bytes.HasSuffix(b, []byte(`,"by":"monitor","reason":"no answer in 30m"}`)))
	e.Topic = `{"type":"x"} and "quotes"`
	b, err = json.Marshal(e)
	require.NoError(t, err)
	assert.Equal(t, 1, bytes.Count(b, []byte(`{"type":"`)), "the marker cannot occur inside a string")
}

// TestEventLogRoundTripAndFilters: appended events read back in order, and
// each filter (issue, since, id, and combinations) selects the right ones.
func TestEventLogRoundTripAndFilters(t *testing.T) {
	log := EventLog{Path: filepath.Join(t.TempDir(), "state", "nested", "events.jsonl")}
	all := []Event{
		EventFor(EventRequested, 42, clar("CLR-42-001", "engineer", "architect", 1), evT0),
		EventFor(EventRequested, 7, clar("CLR-7-001", "architect", "product-manager", 1), evT0.Add(time.Minute)),
		EventFor(EventAnswered, 42, clar("CLR-42-001", "engineer", "architect", 1), evT0.Add(2*time.Minute)),
		EventFor(EventRequested, 0, clar("CLR-0-001", "engineer", "human", 1), evT0.Add(3*time.Minute)),
		EventFor(EventResolved, 42, clar("CLR-42-001", "engineer", "architect", 1), evT0.Add(4*time.Minute)),
	}
	all[4].By = "engineer"
	for _, e := range all {
		require.NoError(t, log.Append(e))
	}
	info, err := os.Stat(log.Path)
	require.NoError(t, err)
	assert.Zero(t, info.Mode().Perm()&0o133, "0644 less umask: no exec bits, no group/other write")

	issue := func(n int) *int { return &n }
	tests := []struct {
		name string
		f    EventFilter
		want []int // indexes into all
	}{
		{"all", EventFilter{}, []int{0, 1, 2, 3, 4}},
		{"issue 42", EventFilter{Issue: issue(42)}, []int{0, 2, 4}},
		{"issue 0 is a filter too", EventFilter{Issue: issue(0)}, []int{3}},
		{"issue none", EventFilter{Issue: issue(99)}, nil},
		{"since is inclusive", EventFilter{Since: evT0.Add(2 * time.Minute)}, []int{2, 3, 4}},
		{"since in another zone", EventFilter{Since: evT0.Add(150 * time.Second).In(time.FixedZone("X", -5*3600))}, []int{3, 4}},
		{"id", EventFilter{ID: "CLR-7-001"}, []int{1}},
		{"issue and since", EventFilter{Issue: issue(42), Since: evT0.Add(time.Minute)}, []int{2, 4}},
		{"id and since", EventFilter{ID: "CLR-42-001", Since: evT0.Add(3 * time.Minute)}, []int{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := log.Read(tt.f)
			require.NoError(t, err)
			assert.Zero(t, res.Skipped)
			var want []Event
			for _, i := range tt.want {
				want = append(want, all[i])
			}
			assert.Equal(t, want, res.Events)
		})
	}
}

// TestEventLogReadMissingFile: no file is no events, not an error.
func TestEventLogReadMissingFile(t *testing.T) {
	res, err := EventLog{Path: filepath.Join(t.TempDir(), "nope", "events.jsonl")}.Read(EventFilter{})
	require.NoError(t, err)
	assert.Empty(t, res.Events)
	assert.Zero(t, res.Skipped)
}

// TestEventLogReadSkipsBadLines: a torn last line, garbage, JSON that is
// not an event and blank lines are skipped (counted, except blanks), never
// fatal; a whole event glued behind a torn fragment is still read.
func TestEventLogReadSkipsBadLines(t *testing.T) {
	log := EventLog{Path: filepath.Join(t.TempDir(), "events.jsonl")}
	e1 := EventFor(EventRequested, 42, clar("CLR-42-001", "engineer", "architect", 1), evT0)
	e2 := EventFor(EventAnswered, 42, clar("CLR-42-001", "engineer", "architect", 1), evT0.Add(time.Minute))
	e3 := EventFor(EventResolved, 42, clar("CLR-42-001", "engineer", "architect", 1), evT0.Add(2*time.Minute))
	line := func(e Event) string { b, err := json.Marshal(e); require.NoError(t, err); return string(b) }

	require.NoError(t, log.Append(e1))
	appendRaw(t, log.Path, "not json at all\n\n{\"hello\":1}\n")
	require.NoError(t, log.Append(e2))
	appendRaw(t, log.Path, line(e3)[:40]) // torn last line
	res, err := log.Read(EventFilter{})
	require.NoError(t, err)
	assert.Equal(t, []Event{e1, e2}, res.Events)
	assert.Equal(t, 3, res.Skipped, "garbage, non-event JSON, torn last line")

	// another writer appends after the torn fragment: its event survives
	require.NoError(t, log.Append(e3))
	res, err = log.Read(EventFilter{})
	require.NoError(t, err)
	assert.Equal(t, []Event{e1, e2, e3}, res.Events)
	assert.Equal(t, 3, res.Skipped)
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestEventLogConcurrentProcesses: 8 processes append 200 events of ~3 KB
// each to one log at once; the log has exactly 1600 lines, every one a
// whole, valid event, each written once.
func TestEventLogConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const procs, each = 8, 200
	path := filepath.Join(t.TempDir(), "state", "events.jsonl")
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for w := 0; w < procs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := helperCommand("events-append", "AGENTX_EVENTS_PATH="+path, "AGENTX_EVENTS_N="+strconv.Itoa(each), "AGENTX_EVENTS_WRITER="+strconv.Itoa(w))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("writer %d: %v: %s", w, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	seen := map[string]int{}
	lines := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		lines++
		require.Greater(t, len(sc.Bytes()), 3000, "line %d", lines)
		var e Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "line %d is not valid JSON", lines)
		w := e.IssueNumber
		require.Equal(t, bigEvent(w, e.Round), e, "line %d is not exactly what writer %d wrote", lines, w)
		seen[e.ClarificationID]++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, procs*each, lines)
	assert.Len(t, seen, procs*each, "every event once")

	res, err := EventLog{Path: path}.Read(EventFilter{})
	require.NoError(t, err)
	assert.Len(t, res.Events, procs*each)
	assert.Zero(t, res.Skipped)
}

// TestEventLogFollow: Follow delivers the matching events already in the
// log, then ones appended after it started, including a line written in two
// pieces (held until its newline arrives, delivered once), and returns nil
// when ctx is done.
func TestEventLogFollow(t *testing.T) {
	log := EventLog{Path: filepath.Join(t.TempDir(), "events.jsonl")}
	c := clar("CLR-42-001", "engineer", "architect", 1)
	old := EventFor(EventRequested, 42, c, evT0)
	require.NoError(t, log.Append(old))
	require.NoError(t, log.Append(EventFor(EventRequested, 7, clar("CLR-7-001", "engineer", "architect", 1), evT0)))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := make(chan Event, 10)
	done := make(chan error, 1)
	issue := 42
	go func() {
		done <- log.Follow(ctx, EventFilter{Issue: &issue}, 10*time.Millisecond, func(e Event) error {
			got <- e
			return nil
		})
	}()
	next := func() Event {
		t.Helper()
		select {
		case e := <-got:
			return e
		case <-ctx.Done():
			t.Fatal("no event before the deadline")
			return Event{}
		}
	}
	assert.Equal(t, old, next(), "existing event first")

	answered := EventFor(EventAnswered, 42, c, evT0.Add(time.Minute))
	require.NoError(t, log.Append(EventFor(EventRequested, 7, clar("CLR-7-002", "engineer", "architect", 1), evT0)))
	require.NoError(t, log.Append(answered))
	assert.Equal(t, answered, next(), "appended after Follow started")

	resolved := EventFor(EventResolved, 42, c, evT0.Add(2*time.Minute))
	b, err := json.Marshal(resolved)
	require.NoError(t, err)
	appendRaw(t, log.Path, string(b[:50]))
	time.Sleep(60 * time.Millisecond) // several polls see the partial line
	select {
	case e := <-got:
		t.Fatalf("a partial line was delivered: %+v", e)
	default:
	}
	appendRaw(t, log.Path, string(b[50:])+"\n")
	assert.Equal(t, resolved, next(), "partial line delivered once whole")

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err, "ctx done is a normal end")
	case <-time.After(2 * time.Second):
		t.Fatal("Follow did not return after cancel")
	}
	assert.Empty(t, got, "nothing delivered twice")
}

// TestEventLogFollowWaitsForFileAndRestarts: Follow waits for a log that
// does not exist yet, and reads a truncated log again from the start.
func TestEventLogFollowWaitsForFileAndRestarts(t *testing.T) {
	log := EventLog{Path: filepath.Join(t.TempDir(), "state", "events.jsonl")}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := make(chan Event, 10)
	go func() {
		_ = log.Follow(ctx, EventFilter{}, 10*time.Millisecond, func(e Event) error { got <- e; return nil })
	}()
	next := func() Event {
		t.Helper()
		select {
		case e := <-got:
			return e
		case <-ctx.Done():
			t.Fatal("no event before the deadline")
			return Event{}
		}
	}
	time.Sleep(30 * time.Millisecond)
	e1 := EventFor(EventRequested, 1, clar("CLR-1-001", "engineer", "architect", 1), evT0)
	e2 := EventFor(EventAnswered, 1, clar("CLR-1-001", "engineer", "architect", 1), evT0)
	require.NoError(t, log.Append(e1))
	require.NoError(t, log.Append(e2))
	assert.Equal(t, e1, next())
	assert.Equal(t, e2, next())

	require.NoError(t, os.Truncate(log.Path, 0))
	time.Sleep(30 * time.Millisecond)
	e3 := EventFor(EventResolved, 1, clar("CLR-1-001", "engineer", "architect", 1), evT0)
	require.NoError(t, log.Append(e3))
	assert.Equal(t, e3, next())
}

// TestEventLogFollowStopsOnCallbackError: an error from fn ends Follow and
// is returned as is.
func TestEventLogFollowStopsOnCallbackError(t *testing.T) {
	log := EventLog{Path: filepath.Join(t.TempDir(), "events.jsonl")}
	require.NoError(t, log.Append(EventFor(EventRequested, 1, clar("CLR-1-001", "engineer", "architect", 1), evT0)))
	require.NoError(t, log.Append(EventFor(EventAnswered, 1, clar("CLR-1-001", "engineer", "architect", 1), evT0)))
	stop := fmt.Errorf("stop here")
	calls := 0
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := log.Follow(ctx, EventFilter{}, 10*time.Millisecond, func(Event) error { calls++; return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, calls)
}
