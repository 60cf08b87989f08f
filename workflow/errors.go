package workflow

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Error is one problem in a workflow or config file. Line is 0 when the position is
// unknown; Key is the dotted TOML key (e.g. "steps.clarify_max_rounds"), empty for
// syntax errors without a key.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
	Hint string
}

// Error formats the problem as "file:line: key: msg (hint: ...)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Errors is every problem found in one or more files, in file then line order. The
// loaders return it (never an empty one) for invalid content, so callers can map it to
// the "invalid data" exit code with errors.As.
type Errors []*Error

// Error lists the problems one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap gives errors.As access to each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sortErrors orders problems by file, then line, keeping discovery order otherwise.
func sortErrors(es Errors) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].File != es[j].File {
			return es[i].File < es[j].File
		}
		return es[i].Line < es[j].Line
	})
}

// Sentinels for LookupError.Kind; test with errors.Is.
var (
	// ErrNoStep: the agent has no step in the workflow (callers: "rejected by rules").
	ErrNoStep = errors.New("agent has no step in workflow")
	// ErrUnknownStep: no step has the requested id.
	ErrUnknownStep = errors.New("unknown step")
	// ErrStepAgentMismatch: the requested step belongs to another agent.
	ErrStepAgentMismatch = errors.New("step belongs to another agent")
	// ErrUnknownWorkflow: no loaded workflow has the requested name.
	ErrUnknownWorkflow = errors.New("unknown workflow")
)

// LookupError reports a failed Workflow.Rule or Set.Workflow lookup. Kind is one of
// ErrNoStep, ErrUnknownStep, ErrStepAgentMismatch or ErrUnknownWorkflow, and
// errors.Is(err, Kind) holds.
type LookupError struct {
	Kind      error
	Workflow  string
	Step      string
	Agent     string   // the agent that asked
	StepAgent string   // ErrStepAgentMismatch: the agent that owns Step
	Known     []string // ErrUnknownWorkflow: workflow names; ErrUnknownStep: step ids
}

func (e *LookupError) Error() string {
	switch e.Kind {
	case ErrNoStep:
		return fmt.Sprintf("agent %q has no step in workflow %q", e.Agent, e.Workflow)
	case ErrUnknownStep:
		return fmt.Sprintf("workflow %q has no step %q (steps: %s)", e.Workflow, e.Step, strings.Join(e.Known, ", "))
	case ErrStepAgentMismatch:
		return fmt.Sprintf("step %q of workflow %q belongs to agent %q, not %q", e.Step, e.Workflow, e.StepAgent, e.Agent)
	case ErrUnknownWorkflow:
		if len(e.Known) == 0 {
			return fmt.Sprintf("unknown workflow %q (no workflows loaded)", e.Workflow)
		}
		return fmt.Sprintf("unknown workflow %q (known: %s)", e.Workflow, strings.Join(e.Known, ", "))
	}
	return fmt.Sprintf("workflow %q: lookup failed", e.Workflow)
}

// Unwrap returns Kind so errors.Is(err, ErrNoStep) works.
func (e *LookupError) Unwrap() error { return e.Kind }

// BrokenError is a workflow asked of a Set that does not hold it while
// some workflow file did not load (LoadPartial): the workflow may be that
// file's. It is invalid data, not an unknown name: errors.As finds Errs.
type BrokenError struct {
	Workflow string
	// Own: Errs are the problems of the file named after the workflow
	// (workflows/NAME.toml); else of every file left out.
	Own  bool
	Errs Errors
}

func (e *BrokenError) Error() string {
	if e.Own {
		return fmt.Sprintf("workflow %q does not load:\n%s", e.Workflow, e.Errs)
	}
	return fmt.Sprintf("no workflow %q among those that load, and a workflow file does not load (it may be there):\n%s", e.Workflow, e.Errs)
}

// Unwrap gives errors.As the problems (Errors).
func (e *BrokenError) Unwrap() error { return e.Errs }

// Hint says what to do, in no front end's words (the command line names
// its validate command).
func (e *BrokenError) Hint() string {
	return "fix the workflow file; the other workflows work meanwhile"
}

// brokenError is the BrokenError for name: the problems of its own file
// when one is named after it, else every one of them.
func brokenError(name string, broken Errors) *BrokenError {
	var own Errors
	for _, e := range broken {
		if strings.TrimSuffix(filepath.Base(e.File), ".toml") == name {
			own = append(own, e)
		}
	}
	if len(own) > 0 {
		return &BrokenError{Workflow: name, Own: true, Errs: own}
	}
	return &BrokenError{Workflow: name, Errs: broken}
}
