//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileTOML is a set of config or workflow files built to cost a reader
// the most, each just under 1 MiB (the most agentx reads): inline tables and
// arrays nested as deep as agentx allows, repeated; one long array; many
// keys; many tables; dotted keys and table headers thousands of components
// deep (nesting without brackets); many steps; one long string.
func hostileTOML() map[string]string {
	const size = 1<<20 - 64
	fill := func(head, line string) string {
		var b strings.Builder
		b.WriteString(head)
		for i := 0; b.Len()+len(line)+16 < size; i++ {
			b.WriteString(strings.ReplaceAll(line, "N", itoa(i)))
		}
		return b.String()
	}
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	dotted := strings.Repeat("a.", (size-64)/2) + "a = 1\n"
	header := "[" + strings.Repeat("a.", (size-64)/2) + "a]\nx = 1\n"
	return map[string]string{
		"inline tables 32 deep, repeated": fill("name = \"x\"\n", "kN = "+nest("{a=", "}", 31)+"\n"),
		"arrays 32 deep, repeated":        fill("name = \"x\"\n", "kN = "+nest("[", "]", 31)+"\n"),
		"one long array":                  "name = \"x\"\nv = [" + strings.Repeat("1,", (size-32)/2) + "1]\n",
		"an array of inline tables":       "name = \"x\"\nv = [" + strings.Repeat("{a=1},", (size-32)/6) + "{a=1}]\n",
		"many keys":                       fill("name = \"x\"\n", "kN = 1\n"),
		"many tables":                     fill("name = \"x\"\n", "[tN]\nx = 1\n"),
		"a dotted key 500,000 deep":       "name = \"x\"\n" + dotted,
		"a table header 500,000 deep":     "name = \"x\"\n" + header,
		"many steps":                      fill("name = \"x\"\n", "[[steps]]\nname = \"sN\"\ncan_clarify = [\"architect\"]\n"),
		"one long string":                 "name = \"" + strings.Repeat("x", size-32) + "\"\n",
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestHostileWorkflowCost: each hostile file, as a workflow and as
// config.toml, costs the agentx process that reads it under 100 MB of
// memory (peak RSS, from the kernel's rusage of the child) and under 1 s
// of CPU, and is answered (refused or read), not crashed on. The figures
// are logged (go test -v -run TestHostileWorkflowCost ./cmd/agentx).
func TestHostileWorkflowCost(t *testing.T) {
	root, agentx := initWorkspace(t)
	const maxRSS, maxCPU = 100 << 20, time.Second
	for name, text := range hostileTOML() {
		for _, as := range []string{"workflow", "config"} {
			path := filepath.Join(root, ".agentx", "workflows", "hostile.toml")
			args := []string{"workflow", "list"}
			if as == "config" {
				path = filepath.Join(root, ".agentx", "config.toml")
				args = []string{"clarify", "list"}
			}
			orig, _ := os.ReadFile(path) // config.toml is put back after
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			m, out := measure(t, agentx(args...))
			if orig != nil {
				_ = os.WriteFile(path, orig, 0o644)
			} else {
				_ = os.Remove(path)
			}
			rss, cpu, code := m.RSS, m.CPU, m.Code
			t.Logf("%-34s as %-8s %7d bytes: exit %d, peak RSS %5.1f MB, CPU %4d ms, wall %4d ms",
				name, as, len(text), code, float64(rss)/(1<<20), cpu.Milliseconds(), m.Wall.Milliseconds())
			if rss >= maxRSS || cpu >= maxCPU {
				t.Errorf("%s as %s: peak RSS %d MB, CPU %s: want under %d MB and %s", name, as, rss>>20, cpu, maxRSS>>20, maxCPU)
			}
			if code != 0 && code != 7 || strings.Contains(string(out), "panic") {
				t.Errorf("%s as %s: exit %d:\n%.600s", name, as, code, out)
			}
		}
	}
}

// measured is what a child process cost: its peak RSS in bytes, CPU (user
// and system), wall time and exit code.
type measured struct {
	RSS  int64
	CPU  time.Duration
	Wall time.Duration
	Code int
}

// measure runs c from a small helper process (this test binary, run again
// as TestMeasureHelper) and returns what it cost, and its output. Not from
// this process: Linux starts a child in its parent's memory until it execs,
// and keeps that memory's peak as the child's, so a child of a test holding
// megabytes of hostile text would be charged for them.
func measure(t *testing.T, c *exec.Cmd) (measured, []byte) {
	t.Helper()
	spec, err := json.Marshal(struct {
		Args []string
		Dir  string
	}{c.Args, c.Dir})
	if err != nil {
		t.Fatal(err)
	}
	h := exec.Command(os.Args[0], "-test.run=^TestMeasureHelper$")
	h.Env = append(c.Env, "AGENTX_TEST_MEASURE="+string(spec))
	raw, err := h.Output()
	if err != nil {
		t.Fatalf("measuring %v: %v", c.Args, err)
	}
	var res struct {
		M   measured
		Out []byte
	}
	if i := bytes.Index(raw, []byte("MEASURED ")); i < 0 {
		t.Fatalf("measuring %v: helper printed %q", c.Args, raw)
	} else if err := json.Unmarshal(bytes.SplitN(raw[i+len("MEASURED "):], []byte("\n"), 2)[0], &res); err != nil {
		t.Fatalf("measuring %v: %v", c.Args, err)
	}
	return res.M, res.Out
}

// TestMeasureHelper is measure's helper: with AGENTX_TEST_MEASURE set it runs
// the command given there and prints what it cost; otherwise it does nothing.
func TestMeasureHelper(t *testing.T) {
	spec := os.Getenv("AGENTX_TEST_MEASURE")
	if spec == "" {
		return
	}
	var s struct {
		Args []string
		Dir  string
	}
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatal(err)
	}
	// A file that defeats the bound must fail this test, not take the
	// machine's memory with it: the child is killed after 20 s.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, s.Args[0], s.Args[1:]...)
	c.Dir = s.Dir
	start := time.Now()
	out, _ := c.CombinedOutput()
	if c.ProcessState == nil {
		t.Fatalf("%v did not run", s.Args)
	}
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	m := measured{RSS: ru.Maxrss << 10, CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), Wall: time.Since(start), Code: c.ProcessState.ExitCode()}
	b, _ := json.Marshal(struct {
		M   measured
		Out []byte
	}{m, out})
	fmt.Printf("MEASURED %s\n", b)
}
