package workflow

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"time"
)

// addTOMLSeeds adds the default files and the bad examples under testdata.
func addTOMLSeeds(f *testing.F, extra ...string) {
	for _, data := range DefaultFiles() {
		f.Add(data)
	}
	files, _ := filepath.Glob("testdata/bad/*.toml")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// checkErrs fails unless err is a non-empty Errors about file, each
// problem with a message: what the CLI prints and maps to exit 7.
func checkErrs(t *testing.T, file string, err error) {
	t.Helper()
	var es Errors
	if !errors.As(err, &es) || len(es) == 0 {
		t.Fatalf("error %T %v: want a non-empty workflow.Errors", err, err)
	}
	for _, e := range es {
		if e.File != file || e.Msg == "" || e.Line < 0 {
			t.Fatalf("problem %+v: want file %q, a message and a line >= 0", e, file)
		}
	}
}

// parseTwice parses data twice and fails unless both give the same: no
// map order or other state leaks into what a file means.
func parseTwice[T any](t *testing.T, parse func(string, []byte) (T, error), file string, data []byte) (T, error) {
	t.Helper()
	v, err := parse(file, data)
	v2, err2 := parse(file, data)
	if (err == nil) != (err2 == nil) || !reflect.DeepEqual(v, v2) || (err != nil && err.Error() != err2.Error()) {
		t.Fatalf("parsing twice differs: %v / %v", err, err2)
	}
	return v, err
}

// FuzzParseWorkflow: a workflow file either loads, with every rule within
// its bounds (rounds 1..MaxClarifyRounds, a positive SLA that fits in a
// time.Duration, valid agent names, needs naming existing steps), or fails
// with Errors naming the file; parsing is deterministic.
func FuzzParseWorkflow(f *testing.F) {
	addTOMLSeeds(f,
		"[[steps]]\nid = \"a\"\nagent = \"engineer\"\nclarify_sla_minutes = 9223372036854775807\n",
		"[[steps]]\nid = \"a\"\nagent = \"engineer\"\nclarify_sla_minutes = 153722868\n",
		"[[steps]]\nid = \"\\u001b[2J\"\nagent = \"engineer\"\nneeds = [\"\\u001b[2J\"]\n",
		"steps = [{id = \"a\", agent = \"e\"}]\n[workflow]\nname = \"x\"\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "wf.toml"
		w, err := parseTwice(t, parseWorkflow, file, data)
		if err != nil {
			checkErrs(t, file, err)
			return
		}
		if len(w.Steps) == 0 || w.Name == "" {
			t.Fatalf("loaded a workflow with no steps or no name: %+v", w)
		}
		ids := map[string]bool{}
		for _, s := range w.Steps {
			if ids[s.ID] {
				t.Fatalf("duplicate step id %q loaded", s.ID)
			}
			ids[s.ID] = true
		}
		for _, s := range w.Steps {
			r := w.rule(&s)
			switch {
			case !agentNameShape.MatchString(s.Agent):
				t.Fatalf("step %q: agent %q loaded", s.ID, s.Agent)
			case s.ClarifyMaxRounds < 1 || s.ClarifyMaxRounds > MaxClarifyRounds:
				t.Fatalf("step %q: %d rounds loaded", s.ID, s.ClarifyMaxRounds)
			case r.SLA <= 0 || r.SLA/time.Minute != time.Duration(s.ClarifySLAMinutes):
				t.Fatalf("step %q: clarify_sla_minutes %d gives an SLA of %v", s.ID, s.ClarifySLAMinutes, r.SLA)
			case slices.Contains(s.CanClarify, s.Agent):
				t.Fatalf("step %q: its agent may ask itself", s.ID)
			}
			for _, n := range s.Needs {
				if !ids[n] {
					t.Fatalf("step %q needs %q, which does not exist", s.ID, n)
				}
			}
		}
	})
}

// FuzzParseConfig: config.toml either loads with every setting within its
// bounds (durations and the human SLA positive, responders with a
// command) or fails with Errors naming the file; parsing is deterministic.
func FuzzParseConfig(f *testing.F) {
	addTOMLSeeds(f,
		"human_sla_minutes = 9223372036854775807\n",
		"human_sla_minutes = 153722868\n",
		"[lock]\nwait = \"2562047h47m16.854775807s\"\nstale_age = \"-1s\"\n",
		"[agents.architect]\ncommand = [\"./a.sh\"]\ntimeout = \"1ns\"\n[notify]\ncommand = [\"\"]\n",
		"stuck_similarity = nan\n",
		"[memory]\nreuse = \"off\"\nsimilarity = nan\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "config.toml"
		c, err := parseTwice(t, parseConfig, file, data)
		if err != nil {
			checkErrs(t, file, err)
			return
		}
		switch {
		case c.HumanSLAMinutes <= 0 || c.HumanSLA() <= 0 || c.HumanSLA()/time.Minute != time.Duration(c.HumanSLAMinutes):
			t.Fatalf("human_sla_minutes %d gives an SLA of %v", c.HumanSLAMinutes, c.HumanSLA())
		case c.MaxQuestions < 0:
			t.Fatalf("max_questions %d loaded", c.MaxQuestions)
		case !(c.StuckSimilarity > 0 && c.StuckSimilarity <= 1):
			t.Fatalf("stuck_similarity %v loaded", c.StuckSimilarity)
		case !(c.Memory.Similarity > 0 && c.Memory.Similarity <= 1) || c.Memory.Reuse != MemorySuggest && c.Memory.Reuse != MemoryOff:
			t.Fatalf("[memory] %+v loaded", c.Memory)
		case c.DeadlockScope != ScopeIssue && c.DeadlockScope != ScopeGlobal:
			t.Fatalf("deadlock_scope %q loaded", c.DeadlockScope)
		case c.Lock.Wait.Duration <= 0 || c.Lock.StaleAge.Duration <= 0:
			t.Fatalf("lock durations %v, %v loaded", c.Lock.Wait, c.Lock.StaleAge)
		case c.Agents == nil:
			t.Fatal("Agents is nil")
		case c.Notify != nil && (len(c.Notify.Command) == 0 || c.Notify.Command[0] == ""):
			t.Fatalf("notify command %q loaded", c.Notify.Command)
		}
		for name, a := range c.Agents {
			if !agentNameShape.MatchString(name) || name == Human || len(a.Command) == 0 || a.Command[0] == "" || a.Timeout.Duration <= 0 {
				t.Fatalf("agent %q loaded as %+v", name, a)
			}
		}
	})
}

// FuzzDuration: a duration either parses, and writes back to text that
// parses to the same duration, or fails with an error; never a panic.
func FuzzDuration(f *testing.F) {
	for _, s := range []string{"30s", "10m", "1h30m", "0", "-1s", "1.5h", "2562047h47m16.854775807s", "2562047h47m16.854775808s", "", "5", "1e3s", "µs", "1µs", ".s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d Duration
		if err := d.UnmarshalText([]byte(s)); err != nil {
			return
		}
		text, err := d.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%v): %v", d, err)
		}
		var back Duration
		if err := back.UnmarshalText(text); err != nil || back != d {
			t.Fatalf("%q parses as %v, written as %q, which reads back as %v, %v", s, d.Duration, text, back.Duration, err)
		}
	})
}

// agentNameShape is an agent name's shape written as a regular expression,
// an oracle independent of isAgentName.
var agentNameShape = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
