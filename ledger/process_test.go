package ledger

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/lock"
)

// The test binary doubles as a writer process: with AGENTX_LEDGER_HELPER set
// it appends clarifications to a ledger and prints "ACK <id>" after each
// Update returns, so the parent knows which writes were acknowledged.
func TestMain(m *testing.M) {
	testenv.QuickRaceExit()
	if mode := os.Getenv("AGENTX_LEDGER_HELPER"); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	switch mode {
	case "pause":
		return pauseHelper()
	case "read":
		return readHelper()
	case "ask":
		return askHelper()
	}
	dir := os.Getenv("AGENTX_LEDGER_DIR")
	n, _ := strconv.Atoi(os.Getenv("AGENTX_LEDGER_N"))
	// These tests prove that no write is lost or torn; the lock package
	// proves the default wait budget under contention. A durable ledger
	// write holds the lock for two fsyncs, which a loaded CI machine running
	// -race can stretch far, so the writers here wait as long as it takes.
	s := NewStore(dir, lock.Options{Agent: "helper", Wait: time.Minute}, nil)
	w := bufio.NewWriter(os.Stdout)
	for i := 0; i < n; i++ {
		var id string
		_, err := s.Update(context.Background(), 7, func(l *Ledger) error {
			if err := ask(s, "engineer", "architect", fmt.Sprintf("question %d from %d", i, os.Getpid()))(l); err != nil {
				return err
			}
			id = l.Clarifications[len(l.Clarifications)-1].ID
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "update:", err)
			return 1
		}
		fmt.Fprintln(w, "ACK", id)
		w.Flush()
	}
	return 0
}

// askHelper asks questions on issue 7 through Store.Ask until the file
// "stop" appears beside the state, printing "ACK id question handed" after
// each (handed: 1 when the lock's holder made it, 0 when this process
// did); after each, it notes on the question it asked (Store.Hand, the
// test Changer noter) and prints "NOTE id note handed".
func askHelper() int {
	dir := os.Getenv("AGENTX_LEDGER_DIR")
	s := NewStore(dir, lock.Options{Agent: "asker", Wait: time.Minute}, nil)
	s.Handle("note", noter{})
	handed := false
	handedHook = func() { handed = true }
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		if _, err := os.Stat(dir + "/stop"); err == nil {
			return 0
		}
		handed = false
		body := fmt.Sprintf("question-%d-%d", os.Getpid(), i)
		c, err := s.Ask(context.Background(), 7, Asking{
			Question: NewQuestion{From: "engineer", To: "architect", Topic: "storage", Body: body, MaxRounds: 3, SLA: time.Hour},
			At:       time.Now(),
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "ask:", err)
			return 1
		}
		h := 0
		if handed {
			h = 1
		}
		fmt.Fprintln(w, "ACK", c.ID, body, h)
		w.Flush()
		handed = false
		body = fmt.Sprintf("note-%d-%d", os.Getpid(), i)
		if c, err = s.Hand(context.Background(), note(c.ID, "engineer", body, 0)); err != nil {
			fmt.Fprintln(os.Stderr, "note:", err)
			return 1
		}
		h = 0
		if handed {
			h = 1
		}
		fmt.Fprintln(w, "NOTE", c.ID, body, h)
		w.Flush()
	}
}

// pauseHelper makes one Update that says "IN" from inside fn, with the lock
// held, and dawdles there so the parent can SIGSTOP it; it prints "ACK id"
// if the write was made, "LOST" (exit 3) if it was refused because another
// tool took the lock over meanwhile.
func pauseHelper() int {
	s := NewStore(os.Getenv("AGENTX_LEDGER_DIR"), lock.Options{Agent: "paused"}, nil)
	var id string
	_, err := s.Update(context.Background(), 7, func(l *Ledger) error {
		fmt.Println("IN")
		time.Sleep(300 * time.Millisecond)
		if err := ask(s, "engineer", "architect", "the paused writer's question")(l); err != nil {
			return err
		}
		id = l.Clarifications[len(l.Clarifications)-1].ID
		return nil
	})
	var lost *lock.LostError
	switch {
	case errors.As(err, &lost):
		fmt.Println("LOST")
		fmt.Fprintln(os.Stderr, err)
		return 3
	case err != nil:
		fmt.Fprintln(os.Stderr, "update:", err)
		return 1
	}
	fmt.Println("ACK", id)
	return 0
}

// readHelper reads issue 7's ledger over and over until the file "stop"
// appears beside the state: as agentx does, and as a slow tool would (a
// plain open, a read of the first bytes, a pause of a few writes, a read
// of the rest, then JSON). Every read must be a whole version, never fewer
// records than the read before. It prints "READS n" and exits 1 with
// "TORN ..." on the first read that is not.
func readHelper() int {
	dir := os.Getenv("AGENTX_LEDGER_DIR")
	s := NewStore(dir, lock.Options{}, nil)
	reads, last := 0, 0
	for {
		if _, err := os.Stat(dir + "/stop"); err == nil {
			fmt.Println("READS", reads)
			return 0
		}
		l, err := s.Read(7)
		if err == nil {
			// as the monitor does: which may make the index file afresh
			_, _, err = s.OpenEntriesStamped(7, true)
		}
		if err != nil {
			fmt.Println("TORN agentx read:", err)
			return 1
		}
		data, err := slowRead(s.Path(7))
		var doc struct {
			Clarifications []json.RawMessage `json:"clarifications"`
		}
		if err == nil {
			err = json.Unmarshal(data, &doc)
		}
		if err != nil {
			fmt.Println("TORN plain read:", err)
			return 1
		}
		if n := len(doc.Clarifications); n < last || len(l.Clarifications) < last {
			fmt.Println("TORN: fewer records than before:", len(l.Clarifications), n, last)
			return 1
		} else {
			last = n
		}
		reads++
	}
}

// slowRead reads a file in two parts, with a pause between them, and
// fails if it did not read the file as it was when opened.
func slowRead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil {
		return nil, err
	}
	time.Sleep(20 * time.Millisecond)
	rest, err := io.ReadAll(f)
	data := append(head[:n], rest...)
	if err == nil && int64(len(data)) != fi.Size() {
		err = fmt.Errorf("the file changed under the reader: %d bytes when opened, %d read", fi.Size(), len(data))
	}
	return data, err
}

// helperCmd is this test binary as a writer process appending n
// clarifications to issue 7 in dir (helper "append").
func helperCmd(dir string, n int) *exec.Cmd {
	return helperProcess(dir, "append", "AGENTX_LEDGER_N="+strconv.Itoa(n))
}

// helperProcess is this test binary as a helper process of mode (see
// helper) on the store in dir, env added to its environment.
func helperProcess(dir, mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "AGENTX_LEDGER_HELPER="+mode, "AGENTX_LEDGER_DIR="+dir), env...)
	return cmd
}

// requireWholeWrite checks that issue 7's ledger in s is what a whole
// read and write would make of it, its layout memo in force and right,
// and returns it.
func requireWholeWrite(t *testing.T, s *Store, who string) *Ledger {
	t.Helper()
	require.True(t, laidOut(s, 7), "%s left a memo in force", who)
	require.NoError(t, s.CheckLayout(7))
	data, err := os.ReadFile(s.Path(7))
	require.NoError(t, err)
	l, err := Decode(s.Path(7), data)
	require.NoError(t, err)
	again, err := Encode(l)
	require.NoError(t, err)
	require.Equal(t, string(again), string(data), "the ledger is as a whole write makes it")
	return l
}

// TestConcurrentProcessesNeverLoseAWrite: 16 processes append 8
// clarifications each to one ledger; all 128 are there, ids dense and unique.
func TestConcurrentProcessesNeverLoseAWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	procs, each := 16, 8
	if testenv.Race {
		each = 3 // see testenv.Race
	}
	concurrentWriters(t, 0, procs, each)
}

// TestConcurrentProcessesLargeLedger is the same on a ledger with a long
// history, which every writer reads through its layout memo and writes
// through its shadow, while two processes read it over and over: nothing
// lost, every read a whole version, the file is what a whole read and
// write would make, and the memo left describes it.
func TestConcurrentProcessesLargeLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	procs, each := 8, 12
	if testenv.Race {
		each = 2 // see testenv.Race
	}
	var readers []*exec.Cmd
	var outs []*strings.Builder
	dir := concurrentWritersWith(t, 400, procs, each, func(dir string) {
		for range 2 {
			cmd := helperProcess(dir, "read")
			out := &strings.Builder{}
			cmd.Stdout, cmd.Stderr = out, out
			require.NoError(t, cmd.Start())
			readers, outs = append(readers, cmd), append(outs, out)
		}
	})
	require.NoError(t, os.WriteFile(dir+"/stop", nil, 0o644))
	for i, r := range readers {
		require.NoError(t, r.Wait(), "reader %d: %s", i, outs[i])
		require.Contains(t, outs[i].String(), "READS ")
		t.Logf("reader %d: %s", i, strings.TrimSpace(outs[i].String()))
	}
	s := NewStore(dir, lock.Options{}, nil)
	// whatever the readers made of the index file racing the writers, the
	// open questions read are the ledger's
	final, err := s.Read(7)
	require.NoError(t, err)
	open, err := s.OpenEntries(7)
	require.NoError(t, err)
	for i := range open {
		open[i].raw = nil // the bytes as read from the index file
	}
	require.True(t, reflect.DeepEqual(EntriesOf(final), open), "the open questions read are those of the ledger")
	if runtime.GOOS == "linux" {
		shadow, err := os.ReadFile(atomicfile.ShadowOf(s.Path(7)))
		require.NoError(t, err, "the writers kept a shadow")
		prev, err := Decode(s.Path(7), shadow)
		require.NoError(t, err, "which holds a whole version")
		require.Len(t, prev.Clarifications, 400+procs*each-1, "the one before the last")
	}
	requireWholeWrite(t, s, "the last writer")
}

// concurrentWriters seeds issue 7 with seed clarifications, starts procs
// writer processes appending each clarifications, and checks that every
// one is there, ids dense. It returns the state directory.
func concurrentWriters(t *testing.T, seed, procs, each int) string {
	return concurrentWritersWith(t, seed, procs, each, func(string) {})
}

// concurrentWritersWith is concurrentWriters calling also(dir) once the
// history is seeded, before the writers start.
func concurrentWritersWith(t *testing.T, seed, procs, each int, also func(dir string)) string {
	dir := t.TempDir()
	if seed > 0 {
		seedHistory(t, NewStore(dir, lock.Options{}, nil), 7, seed)
	}
	also(dir)
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := helperCmd(dir, each).CombinedOutput()
			if err != nil {
				errs <- fmt.Errorf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	l, err := NewStore(dir, lock.Options{}, nil).Read(7)
	require.NoError(t, err)
	require.Len(t, l.Clarifications, seed+procs*each)
	for i, c := range l.Clarifications {
		assert.Equal(t, FormatID(7, i+1), c.ID)
	}
	return dir
}

// TestCrashMidWriteLosesNothing SIGKILLs a writer at random moments, over
// and over, and checks after each kill that the ledger parses and holds every
// write that was acknowledged: on a small ledger, and on one read and written
// through its layout memo (a kill between the ledger's rename and the memo's
// leaves a memo that is not in force, never a wrong one).
func TestCrashMidWriteLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, tc := range []struct {
		name             string
		seed, iterations int
	}{{"small", 0, 200}, {"large", 400, 60}} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.iterations
			if testenv.Race {
				n /= 5 // see testenv.Race
			}
			killWriters(t, tc.seed, n)
		})
	}
}

// killWriters seeds issue 7 with seed clarifications, then SIGKILLs a
// writer at a random moment, iterations times, checking after each kill
// that the ledger parses, holds every acknowledged write, and that its
// layout memo, if in force, describes it.
func killWriters(t *testing.T, seed, iterations int) {
	dir := t.TempDir()
	s := NewStore(dir, lock.Options{}, nil)
	if seed > 0 {
		seedHistory(t, s, 7, seed)
	}
	acked := map[string]bool{}
	killedMidRun := 0
	for it := 0; it < iterations; it++ {
		cmd := helperCmd(dir, 1000)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		lines := make(chan string, 1024)
		started := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stdout)
			first := true
			for sc.Scan() {
				lines <- sc.Text()
				if first {
					first = false
					close(started)
				}
			}
			close(lines)
		}()
		// Once the writer is writing, kill it at a random moment: a write
		// takes a few milliseconds, so kills land at every stage of one.
		select {
		case <-started:
		case <-time.After(30 * time.Second):
			t.Fatalf("iteration %d: the writer never acknowledged a write", it)
		}
		time.Sleep(time.Duration(rand.IntN(20000)) * time.Microsecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		for line := range lines {
			if id, ok := strings.CutPrefix(line, "ACK "); ok {
				acked[id] = true
			}
		}
		werr := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killedMidRun++
		} else if werr != nil {
			t.Fatalf("iteration %d: writer failed: %v", it, werr)
		}
		l, err := s.Read(7)
		require.NoError(t, err, "iteration %d: the ledger must parse after a kill", it)
		have := make(map[string]bool, len(l.Clarifications))
		for _, c := range l.Clarifications {
			have[c.ID] = true
		}
		for id := range acked {
			require.True(t, have[id], "iteration %d: acknowledged %s is missing", it, id)
		}
		require.NoError(t, s.CheckLayout(7), "iteration %d", it)
	}
	if seed > 0 && runtime.GOOS == "linux" {
		// the writes went through the shadow, which the kills left in
		// every state; each write compared it anew
		assert.FileExists(t, atomicfile.ShadowOf(s.Path(7)))
	}
	// Every file a writer makes under the lock has one temp name
	// (the ledger's, its index file's, its layout memo's, the lock's
	// prepared file): however many writers were killed, no more than one
	// temp file of each is left, for the next write to replace.
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && atomicfile.IsTemp(d.Name()) && !strings.HasSuffix(d.Name(), ".tmp-locked") {
			t.Errorf("a killed writer left %s, which no write replaces", p)
		}
		return err
	})
	require.NoError(t, err)
	t.Logf("%d kills, %d landed mid-run, %d acknowledged writes all present", iterations, killedMidRun, len(acked))
	assert.Greater(t, killedMidRun, iterations*9/10, "kills must land while the writer runs")
	assert.NotEmpty(t, acked)
}
