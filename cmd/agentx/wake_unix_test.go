//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/internal/testenv"
)

// TestWakeFleet is the promise of docs/agents.md ("When the turn has
// ended: the agent is woken") held by real processes: every delivery wakes
// its agent once, whichever agentx process records the answer, however
// many finish at once, and wherever one of them is killed.
//
// Eight agents ask the architect, each on two issues (one under -race),
// and end their turns (hook stop records a session). Then every question
// is answered at once by real `agentx clarify answer` processes, and a
// random half of those are killed (SIGKILL) at a random moment: before
// they record the answer, after it, while they wake. An answer whose
// process was killed is answered again, as a person would, until one
// answer exits 0 or finds the round answered (exit 6). Then a few
// ordinary commands run at once, the next commands that finish a claim a
// killed process left.
//
// Each agent's resume command is a stand-in that appends one line to a
// shared log: the agent, issue and id it was started for, the pid of the
// process that started it and the answer it got on stdin. Every delivery
// must be woken exactly once, with its answer, wherever the processes were
// killed: the resume command is started through an agentx step that
// records the claim started under the agent's wake lock before it becomes
// the command, so a waker killed after starting it leaves nothing to start
// again, and a second step for the same claim exits without running it.
func TestWakeFleet(t *testing.T) {
	bin := buildAgentx(t, "-ldflags=-s -w")
	const agents = 8
	perAgent := 2
	if testenv.Race {
		perAgent = 1
	}
	root := t.TempDir()
	dir := t.TempDir()
	logf := filepath.Join(dir, "wake.log")
	standin := filepath.Join(dir, "standin")
	// One line per wake, written under flock, so concurrent stand-ins do
	// not interleave.
	script := "#!/bin/sh\n" +
		"body=$(cat | tr '\\n' ' ')\n" +
		"line=$(printf '%s %s %s ppid=%s\\t%s' \"$1\" \"$2\" \"$3\" \"$PPID\" \"$body\")\n" +
		"flock " + strconv.Quote(logf) + " sh -c 'printf \"%s\\n\" \"$1\" >> \"$2\"' - \"$line\" " + strconv.Quote(logf) + "\n"
	if err := os.WriteFile(standin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	w := &wakeFleet{t: t, bin: bin, root: root}
	if r := w.run(nil, 0, "init"); r.code != 0 {
		t.Fatalf("init: exit %d: %s", r.code, r.stderr)
	}
	// A workflow whose eight steps' agents may each ask the architect,
	// made the default; each agent with the stand-in as its resume command.
	var wf, cfg strings.Builder
	wf.WriteString("[workflow]\nname = \"wake\"\ndescription = \"askers\"\ntype = \"feature\"\n")
	for i := 1; i <= agents; i++ {
		fmt.Fprintf(&wf, "\n[[steps]]\nid = \"s%d\"\ntitle = \"step %d\"\nagent = \"asker-%d\"\ncan_clarify = [\"architect\"]\n", i, i, i)
		fmt.Fprintf(&cfg, "\n[agents.asker-%d]\nresume = [%q, \"{agent}\", \"{issue}\", \"{id}\"]\n", i, standin)
	}
	if err := os.WriteFile(filepath.Join(root, ".agentx", "workflows", "wake.toml"), []byte(wf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(root, ".agentx", "config.toml")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	b2 := bytes.Replace(b, []byte("\ndefault_workflow = \"feature\""), []byte("\ndefault_workflow = \"wake\""), 1)
	// a lock wait of 30 s, not 5: a busy machine must not fail an answer
	b2 = bytes.Replace(b2, []byte("\nwait = \"5s\""), []byte("\nwait = \"30s\""), 1)
	if bytes.Count(b2, []byte("\"wake\"")) != 1 || !bytes.Contains(b2, []byte("\nwait = \"30s\"")) {
		t.Fatalf("%s: no default_workflow or [lock] wait to change", cfgPath)
	}
	if err := os.WriteFile(cfgPath, append(b2, cfg.String()...), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := w.run(nil, 0, "trust", "--yes"); r.code != 0 {
		t.Fatalf("trust: exit %d: %s", r.code, r.stderr)
	}

	// The askers: ask, end the turn. Each (agent, issue) is one delivery.
	type delivery struct{ agent, issue, id, body string }
	var ds []delivery
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 1; i <= agents; i++ {
		for k := range perAgent {
			agent, issue := "asker-"+strconv.Itoa(i), strconv.Itoa(i+k*agents)
			wg.Go(func() {
				env := []string{"AGENTX_AGENT=" + agent}
				r := w.run(env, 0, "clarify", "ask", "--issue", issue, "--to", "architect", "--topic", "t",
					"--question", "which queue for "+agent+" on "+issue+"?")
				if r.code != 0 {
					t.Errorf("ask %s #%s: exit %d: %s", agent, issue, r.code, r.stderr)
					return
				}
				id := strings.TrimSpace(string(r.stdout))
				stop := fmt.Sprintf(`{"session_id":"session-%s-%s","cwd":"","hook_event_name":"Stop","stop_hook_active":false}`, agent, issue)
				r = w.runIn(env, strings.NewReader(stop), 0, "hook", "stop", "--issue", issue, "--hold", "0s")
				if r.code != 0 {
					t.Errorf("hook stop %s #%s: exit %d: %s", agent, issue, r.code, r.stderr)
					return
				}
				mu.Lock()
				ds = append(ds, delivery{agent, issue, id, "answer-for-" + id})
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if b, err := os.ReadFile(logf); err == nil && len(b) > 0 {
		t.Fatalf("woken before any answer:\n%s", b)
	}

	// All answered at once; a random half of the answering processes
	// killed at a random moment within an answer's usual run, and
	// answered again until the answer is recorded.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	took := w.run([]string{"AGENTX_AGENT=architect"}, 0, "clarify", "list", "--json").took // a command's usual run
	window := max(6*took, 80*time.Millisecond)
	delays := make([]time.Duration, len(ds))
	for i := range ds {
		if rng.IntN(2) == 0 {
			delays[i] = 1 + time.Duration(rng.Int64N(int64(window)))
		}
	}
	var killedBefore, killedAfter int
	recordedByKilled := map[string]bool{} // answers a killed process recorded
	for i, d := range ds {
		wg.Go(func() {
			kill := delays[i]
			for try := 0; ; try++ {
				r := w.run([]string{"AGENTX_AGENT=architect"}, kill, "clarify", "answer", d.id, "--from", "architect", "--body", d.body)
				kill = 0
				switch {
				case r.code == -1:
					continue
				case r.code == 0 && try == 1 && delays[i] > 0:
					mu.Lock()
					killedBefore++ // the killed one had not recorded it
					mu.Unlock()
				case r.code == 6 && try == 1:
					mu.Lock()
					killedAfter++ // it had
					recordedByKilled[d.id] = true
					mu.Unlock()
				case r.code != 0:
					t.Errorf("answer %s: exit %d: %s", d.id, r.code, r.stderr)
				}
				if r.code == 6 && try == 0 {
					t.Errorf("answer %s: answered already, by nobody: %s", d.id, r.stderr)
				}
				return
			}
		})
	}
	wg.Wait()

	// The next commands, at once: they finish what a killed process left.
	for _, args := range [][]string{{"ready"}, {"clarify", "list"}, {"ready", "--json"}, {"clarify", "list", "--all"}} {
		wg.Go(func() {
			if r := w.run(nil, 0, args...); r.code != 0 {
				t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
			}
		})
	}
	wg.Wait()

	// An answer a killed process recorded in the ledger without its event
	// reaching the event log (the event is appended after the ledger is
	// written, and the process was killed between the two) is seen by
	// neither the inbox nor the waker until the side work's scan, once a
	// minute, finds it 30 s old and appends its event again: two commands
	// with the clock two minutes on (AGENTX_NOW) do that and then wake.
	// An answer without its event that no killed process recorded is a
	// failure.
	answered := answeredEvents(t, root)
	want := map[string]delivery{}
	lost := 0
	for _, d := range ds {
		if !answered[d.id] {
			if !recordedByKilled[d.id] {
				t.Errorf("%s: answered, and no clarification-answered event in the log", d.id)
			}
			lost++
			t.Logf("%s: answered by a process killed before it appended the event", d.id)
		}
		want[d.agent+" "+d.issue+" "+d.id] = d
	}
	if lost > 0 {
		later := []string{"AGENTX_NOW=" + time.Now().UTC().Add(2*time.Minute).Format(time.RFC3339)}
		for _, args := range [][]string{{"ready"}, {"clarify", "list"}} {
			if r := w.run(later, 0, args...); r.code != 0 {
				t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
			}
		}
		answered = answeredEvents(t, root)
		for _, d := range ds {
			if !answered[d.id] {
				t.Errorf("%s: its lost event was not appended again", d.id)
			}
		}
	}

	// Every delivery woken: wait for the stand-ins (bounded), then a
	// moment more for a late second wake to show.
	var lines []wakeLine
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines = readWakes(t, logf)
		seen := map[string]bool{}
		for _, l := range lines {
			seen[l.key] = true
		}
		if len(seen) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	lines = readWakes(t, logf)

	w.mu.Lock()
	killed := w.killed
	w.mu.Unlock()
	byKey := map[string][]wakeLine{}
	for _, l := range lines {
		byKey[l.key] = append(byKey[l.key], l)
	}
	doubles := 0
	for _, key := range slices.Sorted(maps.Keys(want)) {
		d, got := want[key], byKey[key]
		switch {
		case len(got) == 0:
			t.Errorf("%s: never woken", key)
			continue
		case len(got) > 1:
			doubles++
			t.Errorf("%s: woken %d times (started by ppids %v; killed: %v)", key, len(got), ppids(got), slices.ContainsFunc(got, func(l wakeLine) bool { return killed[l.ppid] }))
		}
		for _, l := range got {
			if !strings.Contains(l.stdin, d.body) {
				t.Errorf("%s: woken without its answer %q on stdin: %q", key, d.body, l.stdin)
			}
		}
	}
	for key, got := range byKey {
		if _, ok := want[key]; !ok && !(len(got) == 1 && !answered[strings.Fields(key)[2]]) {
			t.Errorf("woken for %q, which is no delivery", key)
		}
	}
	if t.Failed() {
		dumpWakeState(t, root)
	}
	t.Logf("%d deliveries (%d agents), %d wakes, %d doubles, %d answers whose event was lost and appended again; %d answering processes killed (kill window %v): %d before recording the answer, %d after",
		len(ds), agents, len(lines), doubles, lost, len(killed), window.Round(time.Millisecond), killedBefore, killedAfter)
}

// wakeFleet runs agentx processes on one workspace and keeps which ended
// on their own and which were killed, by pid.
type wakeFleet struct {
	t    *testing.T
	bin  string
	root string

	mu     sync.Mutex
	killed map[int]bool
	exited map[int]bool
}

type wakeResult struct {
	code           int // -1: killed
	stdout, stderr []byte
	took           time.Duration
}

func (w *wakeFleet) run(env []string, killAfter time.Duration, args ...string) wakeResult {
	return w.runIn(env, nil, killAfter, args...)
}

// runIn runs agentx with args, the extra environment and stdin to its end,
// killing it (SIGKILL) killAfter in unless that is 0 or it ended before.
func (w *wakeFleet) runIn(env []string, stdin *strings.Reader, killAfter time.Duration, args ...string) wakeResult {
	var r wakeResult
	c := exec.Command(w.bin, args...)
	c.Dir = w.root
	c.Env = processEnv(w.root, append([]string{"AGENTX_AGENT="}, env...)...)
	if stdin != nil {
		c.Stdin = stdin
	}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	if err := c.Start(); err != nil {
		w.t.Errorf("start %v: %v", args, err)
		return wakeResult{code: -1}
	}
	pid := c.Process.Pid
	done := make(chan struct{})
	if killAfter > 0 {
		go func() {
			select {
			case <-done:
			case <-time.After(killAfter):
				_ = c.Process.Signal(syscall.SIGKILL)
			}
		}()
	}
	hung := time.AfterFunc(60*time.Second, func() {
		w.t.Errorf("%v still running after 60 s", args)
		_ = c.Process.Kill()
	})
	err := c.Wait()
	close(done)
	hung.Stop()
	r.took = time.Since(start)
	r.stdout, r.stderr = stdout.Bytes(), stderr.Bytes()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.code = -1
		} else {
			r.code = ee.ExitCode()
		}
	default:
		w.t.Errorf("%v: %v", args, err)
		r.code = -1
	}
	w.mu.Lock()
	if w.killed == nil {
		w.killed, w.exited = map[int]bool{}, map[int]bool{}
	}
	if r.code == -1 {
		w.killed[pid] = true
	} else {
		w.exited[pid] = true
	}
	w.mu.Unlock()
	if bytes.Contains(r.stderr, []byte("panic:")) {
		w.t.Errorf("%v panicked:\n%s", args, r.stderr)
	}
	return r
}

// wakeLine is one wake the stand-in logged.
type wakeLine struct {
	key   string // agent issue id
	ppid  int    // the process that started it
	stdin string
}

func readWakes(t *testing.T, path string) []wakeLine {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []wakeLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		head, stdin, ok := strings.Cut(sc.Text(), "\t")
		fields := strings.Fields(head)
		if !ok || len(fields) != 4 || !strings.HasPrefix(fields[3], "ppid=") {
			t.Fatalf("%s: a line that is not one wake: %q", path, sc.Text())
		}
		ppid, _ := strconv.Atoi(strings.TrimPrefix(fields[3], "ppid="))
		out = append(out, wakeLine{key: strings.Join(fields[:3], " "), ppid: ppid, stdin: stdin})
	}
	return out
}

func ppids(ls []wakeLine) []int {
	var out []int
	for _, l := range ls {
		out = append(out, l.ppid)
	}
	return out
}

// dumpWakeState logs the wake and inbox state and the event log, to tell
// what went wrong.
func dumpWakeState(t *testing.T, root string) {
	t.Helper()
	state := filepath.Join(root, ".agentx", "state")
	for _, pat := range []string{"wake/*.json", "inbox/*.json", "events.jsonl"} {
		files, _ := filepath.Glob(filepath.Join(state, pat))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			t.Logf("%s:\n%s", f, b)
		}
	}
}

// answeredEvents is the ids with a clarification-answered event in the
// workspace's event log.
func answeredEvents(t *testing.T, root string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".agentx", "state", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for line := range bytes.Lines(b) {
		var e struct {
			Type string `json:"type"`
			ID   string `json:"clarificationId"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("events.jsonl: %v: %q", err, line)
		}
		if e.Type == "clarification-answered" {
			out[e.ID] = true
		}
	}
	return out
}
