package evaluate

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

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

// update changes an issue's record under its lock, durably.
func update(ctx context.Context, store *ledger.Store, issue int, fn func(r *Record) error) error {
	r := &Record{IssueNumber: issue}
	return store.UpdateRecord(ctx, File(issue), r, func() error {
		if r.IssueNumber != issue {
			return &ledger.CorruptError{Path: File(issue), Err: fmt.Errorf("issueNumber is %d but the file is for issue %d", r.IssueNumber, issue)}
		}
		return fn(r)
	})
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
