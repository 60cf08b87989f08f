package evaluate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
)

// Dir is the state directory's subdirectory of the evaluation records.
const Dir = "evaluations"

// File is an issue's evaluation record, relative to the state directory.
func File(issue int) string { return path.Join(Dir, "issue-"+strconv.Itoa(issue)+".json") }

// What the gate did with an attempt.
const (
	OutcomeDone      = "done"      // it passed: the step is done
	OutcomeRevise    = "revise"    // sent back to the worker with the feedback
	OutcomeEscalated = "escalated" // handed to a person (Escalation)
)

// Record is one issue's evaluations, oldest first.
type Record struct {
	IssueNumber int        `json:"issueNumber"`
	Attempts    []*Attempt `json:"attempts"`
}

// Attempt is one evaluation of a worker's work on a step.
type Attempt struct {
	ID       string `json:"id"` // EVAL-{issue}-{n}, n counting the issue's evaluations
	Workflow string `json:"workflow"`
	Step     string `json:"step"`
	Agent    string `json:"agent"`
	// Attempt counts the worker's attempts at the step since it last passed
	// or was escalated; MaxAttempts is max_revisions + 1.
	Attempt     int           `json:"attempt"`
	MaxAttempts int           `json:"maxAttempts"`
	Verdict     Verdict       `json:"verdict"`
	Outcome     string        `json:"outcome,omitempty"`
	Checks      []CheckResult `json:"checks"`
	Escalation  string        `json:"escalation,omitempty"` // the clarification a person settles
	// Delivered is set once the revision request reached the worker (its
	// inbox, or hook finish's Claude Code output).
	Delivered bool        `json:"delivered,omitempty"`
	At        ledger.Time `json:"at"`
}

// CheckResult is what one check said.
type CheckResult struct {
	Name       string   `json:"name"`
	Command    []string `json:"command"`
	Verdict    Verdict  `json:"verdict"`
	ExitCode   int      `json:"exitCode"` // -1: it never ran, or was killed
	TimedOut   bool     `json:"timedOut,omitempty"`
	JSON       bool     `json:"json,omitempty"` // the verdict came from JSON on stdout
	DurationMs int64    `json:"durationMs"`
	Feedback   string   `json:"feedback,omitempty"`
	// Output is the end of what it printed (stdout, then stderr), at most
	// MaxOutput bytes; OutputBytes how much it printed in all.
	Output      string `json:"output,omitempty"`
	OutputBytes int64  `json:"outputBytes"`
}

// MaxOutput bounds the output kept per check, in bytes.
const MaxOutput = 8 << 10

// Read returns an issue's record; a missing file is an empty record.
func Read(store *ledger.Store, issue int) (*Record, error) {
	if err := ledger.ValidateIssue(issue); err != nil {
		return nil, err
	}
	r := &Record{IssueNumber: issue}
	if err := store.ReadRecord(File(issue), r); err != nil {
		return nil, fmt.Errorf("evaluations of #%d: %w", issue, err)
	}
	if r.IssueNumber != issue {
		return nil, &ledger.CorruptError{Path: File(issue), Err: fmt.Errorf("issueNumber is %d but the file is for issue %d", r.IssueNumber, issue), Derived: false}
	}
	return r, nil
}

// Issues lists the issues with an evaluation record, ascending.
func Issues(store *ledger.Store) ([]int, error) { return store.IssuesWithFile(Dir) }

// update changes an issue's record under its lock, durably, and keeps its
// revision mark: set before a record that owes a revision request is
// written, removed after one that owes none is (a crash between the two
// leaves at worst a mark with nothing behind it, never a request without
// its mark).
func update(ctx context.Context, store *ledger.Store, issue int, fn func(r *Record) error) error {
	r := &Record{IssueNumber: issue}
	owes := false
	return store.UpdateRecordThen(ctx, File(issue), r, func() error {
		if r.IssueNumber != issue {
			return &ledger.CorruptError{Path: File(issue), Err: fmt.Errorf("issueNumber is %d but the file is for issue %d", r.IssueNumber, issue)}
		}
		if err := fn(r); err != nil {
			return err
		}
		if owes = r.owes(); owes {
			return mark(store, issue)
		}
		return nil
	}, func() error {
		if !owes {
			return unmark(store, issue)
		}
		return nil
	})
}

// The revision marks: evaluations/revise/issue-N.json exists while issue
// N's record holds a revision request not yet delivered, so that an inbox
// reads those records only, not every issue's. revise/built says the marks
// cover every record (made by the first inbox that scanned them all).
const (
	markDir   = "revise"
	builtMark = "built"
)

func markPath(store *ledger.Store, issue int) string {
	return filepath.Join(store.Dir(), Dir, markDir, "issue-"+strconv.Itoa(issue)+".json")
}

// mark records, durably, that issue's record owes a revision request
// (once: a mark already there is durable).
func mark(store *ledger.Store, issue int) error {
	p := markPath(store, issue)
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	return touch(store, p)
}

// unmark removes issue's revision mark.
func unmark(store *ledger.Store, issue int) error {
	if err := os.Remove(markPath(store, issue)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("evaluations of #%d: %w", issue, err)
	}
	return nil
}

// touch writes an empty file at path durably, never through a link.
func touch(store *ledger.Store, path string) error {
	if err := atomicfile.CheckNoLinks(store.Dir(), path); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("evaluations: %w", err)
	}
	return atomicfile.Write(path, nil, 0o644)
}

// owes reports whether a step's latest attempt is a revision request not
// yet delivered.
func (r *Record) owes() bool {
	for _, k := range r.Steps() {
		if a := r.Latest(k[0], k[1]); a.Outcome == OutcomeRevise && !a.Delivered {
			return true
		}
	}
	return false
}

// owing lists the issues whose record may owe a revision request: the
// marked ones, once the marks are built; every issue with a record before
// (and then the marks are built from what scan finds: scan reads each).
func owing(store *ledger.Store, scan func(n int) (owes bool)) ([]int, error) {
	dir := filepath.Join(Dir, markDir)
	if _, err := os.Stat(filepath.Join(store.Dir(), dir, builtMark)); err == nil {
		return store.IssuesWithFile(dir)
	}
	issues, err := Issues(store)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, n := range issues {
		if scan(n) {
			out = append(out, n)
			if err := mark(store, n); err != nil {
				return out, nil // the marks stay unbuilt: the next inbox scans again
			}
		}
	}
	_ = touch(store, filepath.Join(store.Dir(), dir, builtMark))
	return out, nil
}

// Find returns the attempt with id, or nil.
func (r *Record) Find(id string) *Attempt {
	for _, a := range r.Attempts {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// Latest is the newest attempt at a step, or nil.
func (r *Record) Latest(workflowName, step string) *Attempt {
	for i := len(r.Attempts) - 1; i >= 0; i-- {
		if a := r.Attempts[i]; a.Workflow == workflowName && a.Step == step {
			return a
		}
	}
	return nil
}

// cycle returns the attempts at a step since it last passed or was
// escalated, oldest first.
func (r *Record) cycle(workflowName, step string) []*Attempt {
	var out []*Attempt
	for i := len(r.Attempts) - 1; i >= 0; i-- {
		a := r.Attempts[i]
		if a.Workflow != workflowName || a.Step != step {
			continue
		}
		if a.Outcome != OutcomeRevise {
			break
		}
		out = append([]*Attempt{a}, out...)
	}
	return out
}

// Steps lists the (workflow, step) pairs evaluated, in order of first attempt.
func (r *Record) Steps() [][2]string {
	var out [][2]string
	seen := map[[2]string]bool{}
	for _, a := range r.Attempts {
		k := [2]string{a.Workflow, a.Step}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// ParseID splits EVAL-{issue}-{n}.
func ParseID(id string) (issue int, ok bool) {
	rest, found := strings.CutPrefix(id, "EVAL-")
	if !found {
		return 0, false
	}
	is, n, found := strings.Cut(rest, "-")
	if !found {
		return 0, false
	}
	issue, err := strconv.Atoi(is)
	if _, err2 := strconv.Atoi(n); err != nil || err2 != nil || issue < 0 {
		return 0, false
	}
	return issue, true
}

// FailedChecks names an attempt's checks that did not pass.
func (a *Attempt) FailedChecks() []string {
	var out []string
	for _, c := range a.Checks {
		if c.Verdict != Pass {
			out = append(out, c.Name)
		}
	}
	return out
}
