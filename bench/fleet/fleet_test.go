//go:build unix

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	ds := func(ms ...int) []time.Duration {
		var out []time.Duration
		for _, m := range ms {
			out = append(out, time.Duration(m)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", ds(7), 99, 7 * time.Millisecond},
		{"median of odd", ds(1, 2, 3), 50, 2 * time.Millisecond},
		{"median of even is the lower", ds(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p90 of ten", ds(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
		{"p99 of a hundred", ds(hundred...), 99, 99 * time.Millisecond},
		{"p99 of ten is the max", ds(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"p100 is the max", ds(1, 5, 9), 100, 9 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, percentile(tc.sorted, tc.p))
		})
	}
	d := summarize(ds(30, 10, 20))
	assert.Equal(t, dist{N: 3, P50: 20, P90: 30, P99: 30, Max: 30}, d, "summarize sorts a copy")
}

func TestTally(t *testing.T) {
	ps := []proc{
		{Exit: 0},
		{Exit: 5, Stderr: "lock_timeout: first"},
		{Exit: 1, Stderr: "boom"},
		{Exit: 5, Stderr: "lock_timeout: second"},
		{Exit: -1, Stderr: "killed"},
		{Exit: 0},
	}
	assert.Equal(t, []failure{
		{Exit: -1, Count: 1, Example: "killed"},
		{Exit: 1, Count: 1, Example: "boom"},
		{Exit: 5, Count: 2, Example: "lock_timeout: first"},
	}, tally(ps))
	assert.Empty(t, tally([]proc{{Exit: 0}}))
}

func TestErrorLine(t *testing.T) {
	for _, tc := range []struct{ name, stderr, want string }{
		{"empty", "", ""},
		{"agentx JSON error", `{"schema_version":1,"error":{"code":"lock_timeout","exit_code":5,"message":"issue-1.json is locked","hint":"wait"}}` + "\n", "lock_timeout: issue-1.json is locked"},
		{"first line that says something", "\n  agentx: error: no workspace\nhint: run agentx init\n", "agentx: error: no workspace"},
		{"other JSON stays as it is", `{"x":1}`, `{"x":1}`},
		{"long lines are cut", strings.Repeat("é", 300), strings.Repeat("é", 199) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, errorLine([]byte(tc.stderr)))
		})
	}
}

func TestCheckWrites(t *testing.T) {
	for _, tc := range []struct {
		name     string
		acked    []string
		records  []string
		want     writeCheck
		wantOK   bool
		scenario string
	}{
		{name: "all there once", acked: []string{"CLR-1-001", "CLR-1-002"}, records: []string{"CLR-1-002", "CLR-1-001"},
			want: writeCheck{Acked: 2, Records: 2}, wantOK: true},
		{name: "a record missing", acked: []string{"CLR-1-001", "CLR-1-002"}, records: []string{"CLR-1-001"},
			want: writeCheck{Acked: 2, Records: 1, Lost: 1}},
		{name: "two asks printed one id", acked: []string{"CLR-1-001", "CLR-1-001"}, records: []string{"CLR-1-001"},
			want: writeCheck{Acked: 2, Records: 1, Lost: 1}},
		{name: "a record twice", acked: []string{"CLR-1-001"}, records: []string{"CLR-1-001", "CLR-1-001"},
			want: writeCheck{Acked: 1, Records: 2, Doubled: 1}},
		{name: "a failed ask that wrote", acked: []string{"CLR-1-001"}, records: []string{"CLR-1-001", "CLR-1-002"},
			want: writeCheck{Acked: 1, Records: 2, Unacked: 1}, wantOK: true},
		{name: "exit 0 without an id", acked: []string{"CLR-1-001", ""}, records: []string{"CLR-1-001"},
			want: writeCheck{Acked: 1, NoID: 1, Records: 1}},
		{name: "nothing", want: writeCheck{}, wantOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkWrites(tc.acked, tc.records)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.wantOK, got.OK())
		})
	}
}

func TestPrintedID(t *testing.T) {
	assert.Equal(t, "CLR-3-001", printedID([]byte(`{"schema_version":1,"data":{"issueNumber":3,"id":"CLR-3-001"}}`)))
	assert.Equal(t, "", printedID([]byte(`not json`)))
	assert.Equal(t, "", printedID(nil))
}

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{``, nil},
		{`AT_FDCWD, "/a, b", O_RDONLY`, []string{"AT_FDCWD", `"/a, b"`, "O_RDONLY"}},
		{`"/a\"b", 0`, []string{`"/a\"b"`, "0"}},
		{`3, {st_mode=S_IFREG, st_size=1}, [1, 2]`, []string{"3", "{st_mode=S_IFREG, st_size=1}", "[1, 2]"}},
	} {
		assert.Equal(t, tc.want, splitArgs(tc.in), tc.in)
	}
}

// trace is strace -f output of one ask, cut down, with the shapes strace
// prints: a call split across two lines, a failed call, a signal, an exit.
const trace = `15031 openat(AT_FDCWD, "/ws/.agentx/config.toml", O_RDONLY|O_CLOEXEC) = 5
15031 openat(AT_FDCWD, "/ws/.agentx/state/clarifications/issue-3.json.lock.tmp-3749226442", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0600) = 5
15031 linkat(AT_FDCWD, "/ws/.agentx/state/clarifications/issue-3.json.lock.tmp-3749226442", AT_FDCWD, "/ws/.agentx/state/clarifications/issue-3.json.lock", 0) = 0
15031 unlinkat(AT_FDCWD, "/ws/.agentx/state/clarifications/issue-3.json.lock.tmp-3749226442", 0) = 0
15032 openat(AT_FDCWD, "/ws/.agentx/state/clarifications/.issue-3.json.tmp-4036774426", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0600 <unfinished ...>
15031 --- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=15031, si_uid=0} ---
15032 <... openat resumed>) = 5
15031 renameat(AT_FDCWD, "/ws/.agentx/state/clarifications/.issue-3.json.tmp-4036774426", AT_FDCWD, "/ws/.agentx/state/clarifications/issue-3.json") = 0
15031 openat(AT_FDCWD, "/ws/.agentx/state/missing.lock", O_RDONLY) = -1 ENOENT (No such file or directory)
15031 unlinkat(AT_FDCWD, "/ws/.agentx/state/gone", 0) = -1 ENOENT (No such file or directory)
15031 openat(AT_FDCWD, "/tmp/elsewhere", O_WRONLY|O_CREAT, 0644) = 6
15031 openat(AT_FDCWD, "/ws/.agentx/state/events.jsonl", O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC, 0644) = 5
15031 openat(AT_FDCWD, "/ws/.agentx/state/agent-status.json.lock.takeover", O_RDONLY|O_CREAT|O_CLOEXEC, 0644) = 7
15031 openat(AT_FDCWD, "/ws/.agentx/state/agent-status.json", O_WRONLY|O_CLOEXEC) = 7
15031 renameat2(AT_FDCWD, "/ws/.agentx/state/a", AT_FDCWD, "/ws/.agentx/state/b", RENAME_NOREPLACE) = 0
15031 unlink("relative/.agentx/x") = 0
15031 unlinkat(AT_FDCWD, "/ws/.agentx/state/clarifications/issue-3.json.lock", 0) = 0
15031 +++ exited with 0 +++
`

func TestParseStrace(t *testing.T) {
	calls, err := parseStrace(strings.NewReader(trace))
	require.NoError(t, err)
	require.Len(t, calls, 15, "signals and exits are not calls; the split call is one")
	assert.Equal(t, sysCall{Name: "openat", OK: true, Args: []string{"AT_FDCWD", `"/ws/.agentx/state/clarifications/.issue-3.json.tmp-4036774426"`, "O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC", "0600"}}, calls[4])
	assert.False(t, calls[6].OK, "ENOENT is a failure")

	assert.Equal(t, []fileWrite{
		{Path: ".agentx/state/clarifications/issue-3.json.lock.tmp-*", Ops: []string{"create", "link-from", "unlink"}},
		{Path: ".agentx/state/clarifications/issue-3.json.lock", Ops: []string{"link-to", "unlink"}},
		{Path: ".agentx/state/clarifications/.issue-3.json.tmp-*", Ops: []string{"create", "rename-from"}},
		{Path: ".agentx/state/clarifications/issue-3.json", Ops: []string{"rename-to"}},
		{Path: ".agentx/state/events.jsonl", Ops: []string{"append"}},
		{Path: ".agentx/state/agent-status.json.lock.takeover", Ops: []string{"create-if-missing"}},
		{Path: ".agentx/state/agent-status.json", Ops: []string{"write"}},
		{Path: ".agentx/state/a", Ops: []string{"rename-from"}},
		{Path: ".agentx/state/b", Ops: []string{"rename-to"}},
	}, writesUnder(calls, "/ws"), "only successful writes under .agentx/ of the workspace; relative paths are the workspace's")

	twice := trace + "15031 openat(AT_FDCWD, \"/ws/.agentx/state/events.jsonl\", O_WRONLY|O_CREAT|O_APPEND, 0644) = 5\n"
	calls, err = parseStrace(strings.NewReader(twice))
	require.NoError(t, err)
	assert.Contains(t, writesUnder(calls, "/ws"), fileWrite{Path: ".agentx/state/events.jsonl", Ops: []string{"append×2"}})
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 8, 32, 64}, c.procs)
	assert.Equal(t, 25, c.k)
	assert.Equal(t, []int{10, 5000}, c.historySizes)

	c, err = parseFlags([]string{"-quick", "-k", "7"})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 8}, c.procs, "-quick sets what is not given")
	assert.Equal(t, 7, c.k, "and keeps what is")
	assert.Equal(t, 1000, c.ledgers)
	assert.Equal(t, 100_000, c.events)

	for _, bad := range [][]string{{"-procs", "1,x"}, {"-procs", "0"}, {"-k", "0"}, {"extra"}} {
		_, err := parseFlags(bad)
		assert.Error(t, err, bad)
	}
}

func TestPerProc(t *testing.T) {
	c := config{k: 25, maxAsks: 400}
	for p, want := range map[int]int{1: 25, 8: 25, 16: 25, 32: 12, 64: 6, 1000: 1} {
		assert.Equal(t, want, c.perProc(p), "P=%d", p)
	}
}
