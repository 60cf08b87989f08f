package workflow

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// Defaults for step keys that a workflow file leaves out.
const (
	DefaultClarifyMaxRounds = 5 // blocking questions (the PRD's P0-3)
	// DefaultClarifyMaxRoundsNonBlocking is the rounds a non-blocking
	// question gets when the step sets neither key: one more than a
	// blocking one, since it holds nothing up.
	DefaultClarifyMaxRoundsNonBlocking = DefaultClarifyMaxRounds + 1
	DefaultClarifySLAMinutes           = 30
	DefaultClarifyBlockingAllowed      = true

	// MaxClarifyRounds is the largest clarify_max_rounds a step may set.
	MaxClarifyRounds = 20
	// MaxSLAMinutes bounds clarify_sla_minutes and human_sla_minutes: a
	// hundred years, well inside what a time.Duration holds.
	MaxSLAMinutes = 100 * 365 * 24 * 60
)

// Human is the built-in clarification target that is never run as a process: it is
// notified and answers with `agentx clarify answer --from human`.
const Human = "human"

// Workflow is one .agentx/workflows/*.toml file.
type Workflow struct {
	Name        string `json:"name"` // [workflow] name, or the file's base name without .toml
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
	Steps       []Step `json:"steps"`
	File        string `json:"file,omitempty"` // the path it was loaded from

	nameLine int // line of [workflow] name; 0 when the name comes from the file name
}

// Step is one [[steps]] table. The clarify fields always hold their effective value
// (defaults applied). The AgentX fields after them are kept for compatibility and
// display; agentx does not act on them.
type Step struct {
	ID    string   `json:"id"`
	Title string   `json:"title,omitempty"`
	Agent string   `json:"agent"`
	Needs []string `json:"needs,omitempty"`

	CanClarify             []string `json:"can_clarify"`                    // whom this step's agent may ask; empty: nobody
	ClarifyMaxRounds       int      `json:"clarify_max_rounds"`             // a blocking question's rounds
	ClarifyMaxRoundsNB     int      `json:"clarify_max_rounds_nonblocking"` // a non-blocking question's rounds
	ClarifySLAMinutes      int      `json:"clarify_sla_minutes"`
	ClarifyBlockingAllowed bool     `json:"clarify_blocking_allowed"`

	Iterate            bool   `json:"iterate,omitempty"`
	MaxIterations      int    `json:"max_iterations,omitempty"`
	CompletionCriteria string `json:"completion_criteria,omitempty"`
	StatusOnStart      string `json:"status_on_start,omitempty"`
	StatusOnComplete   string `json:"status_on_complete,omitempty"`
	Output             string `json:"output,omitempty"`
	Template           string `json:"template,omitempty"`
	Optional           bool   `json:"optional,omitempty"`
	Condition          string `json:"condition,omitempty"`

	// The supervisor gate (see gate.go): checks run on `hook finish`, how
	// many revisions a worker gets, and where it may write.
	Evaluate     []Check  `json:"evaluate,omitempty"`
	MaxRevisions int      `json:"max_revisions"`
	Scope        []string `json:"scope,omitempty"` // empty: unrestricted

	Line int `json:"line,omitempty"` // line of its [[steps]] header; 0 if unknown
}

func stepFields(s *Step) []field {
	return []field{
		{"id", &s.ID, "a string"},
		{"title", &s.Title, "a string"},
		{"agent", &s.Agent, "a string"},
		{"needs", &s.Needs, "an array of strings"},
		{"can_clarify", &s.CanClarify, "an array of strings"},
		{"clarify_max_rounds", &s.ClarifyMaxRounds, "an integer"},
		{"clarify_max_rounds_nonblocking", &s.ClarifyMaxRoundsNB, "an integer"},
		{"clarify_sla_minutes", &s.ClarifySLAMinutes, "an integer"},
		{"clarify_blocking_allowed", &s.ClarifyBlockingAllowed, "a boolean"},
		{"iterate", &s.Iterate, "a boolean"},
		{"max_iterations", &s.MaxIterations, "an integer"},
		{"completion_criteria", &s.CompletionCriteria, "a string"},
		{"status_on_start", &s.StatusOnStart, "a string"},
		{"status_on_complete", &s.StatusOnComplete, "a string"},
		{"output", &s.Output, "a string"},
		{"template", &s.Template, "a string"},
		{"optional", &s.Optional, "a boolean"},
		{"condition", &s.Condition, "a string"},
		{"max_revisions", &s.MaxRevisions, "an integer"},
		{"scope", &s.Scope, "an array of strings"},
	}
}

// LoadWorkflowFile reads and validates one workflow file. Invalid content gives
// Errors listing every problem; a read failure gives the wrapped *fs.PathError.
func LoadWorkflowFile(path string) (*Workflow, error) {
	data, err := atomicfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return parseWorkflow(path, data)
}

func parseWorkflow(file string, data []byte) (*Workflow, error) {
	d, top, ok := parseDoc(file, data)
	if !ok {
		return nil, d.result()
	}
	w := &Workflow{File: file, Steps: []Step{}}
	var tables []map[string]toml.Primitive
	for _, k := range sortedKeys(top) {
		switch k {
		case "workflow":
			if t, ok := d.table(top[k], []string{k}, []string{k}); ok {
				d.decodeTable(t, []string{k}, []string{k}, []field{
					{"name", &w.Name, "a string"},
					{"description", &w.Description, "a string"},
					{"type", &w.Type, "a string"},
				})
			}
		case "steps":
			tables = d.steps(top[k])
		default:
			d.unknown([]string{k}, []string{k}, []string{"workflow", "steps"})
		}
	}
	if d.md.IsDefined("workflow", "name") {
		w.nameLine = d.ix.line("workflow", "name")
		if w.Name == "" && !d.reported["workflow"+sep+"name"] {
			d.addf([]string{"workflow", "name"}, []string{"workflow", "name"}, "", "must not be empty")
		}
	} else {
		w.Name = strings.TrimSuffix(filepath.Base(file), ".toml")
	}
	for i, t := range tables {
		w.Steps = append(w.Steps, d.step(i, t))
	}
	d.checkUndecoded()
	validateGraph(d, w, tables)
	if err := d.result(); err != nil {
		return nil, err
	}
	return w, nil
}

// steps decodes the value of the top-level "steps" key into one table per step.
func (d *doc) steps(p toml.Primitive) []map[string]toml.Primitive {
	path := []string{"steps"}
	var raw any
	if err := d.md.PrimitiveDecode(p, &raw); err != nil {
		d.addf(path, path, "", "%s", tomlMsg(err))
		return nil
	}
	if !isTableArray(raw) {
		d.addf(path, path, "write each step as a [[steps]] table", "want an array of tables, got %s", typeName(raw))
		return nil
	}
	var prims []toml.Primitive
	if err := d.md.PrimitiveDecode(p, &prims); err != nil {
		d.addf(path, path, "", "%s", tomlMsg(err))
		return nil
	}
	tables := make([]map[string]toml.Primitive, len(prims))
	for i, sp := range prims {
		tables[i], _ = d.table(sp, []string{"steps", idx(i)}, path)
	}
	return tables
}

// isTableArray reports whether v is an array of tables: [[steps]] tables, or an
// inline array whose elements are all tables (an empty array counts).
func isTableArray(v any) bool {
	switch v := v.(type) {
	case []map[string]any:
		return true
	case []any:
		for _, e := range v {
			if _, ok := e.(map[string]any); !ok {
				return false
			}
		}
		return true
	}
	return false
}

// step decodes and checks the i-th step on its own; validateGraph checks the steps
// against each other.
func (d *doc) step(i int, t map[string]toml.Primitive) Step {
	path, plain := []string{"steps", idx(i)}, []string{"steps"}
	at := func(k string) ([]string, []string) { return with(path, k), with(plain, k) }
	var s Step
	s.Line = d.ix.line(path...)
	var evaluate toml.Primitive
	defined := d.decodeTable(t, path, plain, append(stepFields(&s), field{"evaluate", &evaluate, "an array of tables"}))
	if !defined["max_revisions"] {
		s.MaxRevisions = DefaultMaxRevisions
	}
	d.gate(&s, path, plain, defined, evaluate)

	if !defined["can_clarify"] {
		s.CanClarify = []string{}
	}
	if !defined["clarify_max_rounds"] {
		s.ClarifyMaxRounds = DefaultClarifyMaxRounds
	}
	if !defined["clarify_max_rounds_nonblocking"] {
		// One more than a blocking question (5 and 6 by default, the PRD's
		// P0-3): a suggestion holds nothing up.
		s.ClarifyMaxRoundsNB = min(s.ClarifyMaxRounds+1, MaxClarifyRounds)
	}
	if !defined["clarify_sla_minutes"] {
		s.ClarifySLAMinutes = DefaultClarifySLAMinutes
	}
	if !defined["clarify_blocking_allowed"] {
		s.ClarifyBlockingAllowed = DefaultClarifyBlockingAllowed
	}

	for _, k := range []string{"id", "agent"} {
		if _, present := t[k]; !present {
			p, pp := at(k)
			if s.ID != "" {
				d.addf(p, pp, "", "required (step %q has none)", s.ID)
			} else {
				d.addf(p, pp, "", "required")
			}
		}
	}
	if defined["id"] && strings.TrimSpace(s.ID) == "" {
		p, pp := at("id")
		d.addf(p, pp, "", "must not be empty")
	}
	if defined["agent"] && s.Agent == "" {
		p, pp := at("agent")
		d.addf(p, pp, "", "must not be empty")
	} else if defined["agent"] && !isAgentName(s.Agent) {
		p, pp := at("agent")
		d.addf(p, pp, agentNameHint, "invalid agent name %q", s.Agent)
	}
	if defined["can_clarify"] {
		p, pp := at("can_clarify")
		for _, target := range s.CanClarify {
			switch {
			case !isAgentName(target):
				d.addf(p, pp, agentNameHint+`; "human" asks a person`, "invalid agent name %q", target)
			case target == s.Agent:
				d.addf(p, pp, "remove it: an agent cannot ask itself", "step %q lists its own agent %q", s.ID, target)
			}
		}
	}
	for _, r := range []struct {
		key string
		n   int
	}{{"clarify_max_rounds", s.ClarifyMaxRounds}, {"clarify_max_rounds_nonblocking", s.ClarifyMaxRoundsNB}} {
		if defined[r.key] && (r.n < 1 || r.n > MaxClarifyRounds) {
			p, pp := at(r.key)
			d.addf(p, pp, "", "must be between 1 and %d, got %d", MaxClarifyRounds, r.n)
		}
	}
	if defined["clarify_sla_minutes"] {
		p, pp := at("clarify_sla_minutes")
		d.slaMinutes(s.ClarifySLAMinutes, p, pp, "")
	}
	return s
}

// validateGraph checks what needs all steps: at least one step, unique ids, needs
// naming existing steps, and no cycle through needs.
func validateGraph(d *doc, w *Workflow, tables []map[string]toml.Primitive) {
	if len(tables) == 0 && !d.reported["steps"] {
		d.addf([]string{"steps"}, []string{"steps"}, "add a [[steps]] table with id and agent", "workflow has no steps")
		return
	}
	first := map[string]int{} // step id -> index of its first definition
	var ids []string
	for i, s := range w.Steps {
		if s.ID == "" {
			continue
		}
		if j, dup := first[s.ID]; dup {
			d.addf([]string{"steps", idx(i), "id"}, []string{"steps", "id"}, "step ids must be unique within a workflow",
				"duplicate step id %q, first defined at line %d", s.ID, w.Steps[j].Line)
			continue
		}
		first[s.ID] = i
		ids = append(ids, s.ID)
	}
	for i, s := range w.Steps {
		for _, n := range s.Needs {
			if _, ok := first[n]; !ok {
				d.addf([]string{"steps", idx(i), "needs"}, []string{"steps", "needs"}, suggest(n, ids, "step ids"),
					"step %q needs unknown step %q", s.ID, n)
			}
		}
	}

	// Depth-first search over needs edges; a back edge closes a cycle.
	const (
		unvisited = iota
		onStack
		done
	)
	state := make([]int, len(w.Steps))
	var stack []int
	seen := map[string]bool{}
	var visit func(i int)
	visit = func(i int) {
		state[i] = onStack
		stack = append(stack, i)
		for _, n := range w.Steps[i].Needs {
			j, ok := first[n]
			if !ok {
				continue
			}
			switch state[j] {
			case unvisited:
				visit(j)
			case onStack:
				cycle := slices.Clone(stack[slices.Index(stack, j):])
				// Start the cycle at its earliest step in the file, so it reads the same
				// whichever step the search started from.
				m := slices.Index(cycle, slices.Min(cycle))
				cycle = append(cycle[m:], cycle[:m]...)
				names := make([]string, 0, len(cycle)+1)
				for _, c := range cycle {
					names = append(names, w.Steps[c].ID)
				}
				names = append(names, names[0])
				text := strings.Join(names, " -> ")
				if !seen[text] {
					seen[text] = true
					d.addf([]string{"steps", idx(cycle[0]), "needs"}, []string{"steps", "needs"},
						"each step needs only steps that finish before it", "needs cycle: %s", text)
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
	}
	for i := range w.Steps {
		if state[i] == unvisited && first[w.Steps[i].ID] == i {
			visit(i)
		}
	}
}

// Step returns the first step with the given id, or nil.
func (w *Workflow) Step(id string) *Step {
	for i := range w.Steps {
		if w.Steps[i].ID == id {
			return &w.Steps[i]
		}
	}
	return nil
}

// Rule is the effective clarification rule for an agent working on one step.
type Rule struct {
	Workflow        string        `json:"workflow"`
	Step            string        `json:"step"`
	Agent           string        `json:"agent"`
	CanClarify      []string      `json:"can_clarify"`            // never nil; empty means the agent may not ask
	MaxRounds       int           `json:"max_rounds"`             // a blocking question's rounds
	MaxRoundsNB     int           `json:"max_rounds_nonblocking"` // a non-blocking question's rounds
	SLA             time.Duration `json:"sla"`
	BlockingAllowed bool          `json:"blocking_allowed"`
}

// Rule returns the clarification rule for agent in this workflow.
//
// With a stepID, it is that step's rule, and the step must belong to agent (else a
// *LookupError with ErrStepAgentMismatch; an unknown id gives ErrUnknownStep).
//
// Without a stepID, it is the rule of the agent's step. Steps are never merged: when
// the agent owns several steps, the first one (in file order) with a non-empty
// can_clarify wins, else its first step. An agent with no step gives a *LookupError
// with ErrNoStep.
func (w *Workflow) Rule(agent, stepID string) (Rule, error) {
	if stepID != "" {
		s := w.Step(stepID)
		if s == nil {
			ids := make([]string, len(w.Steps))
			for i, st := range w.Steps {
				ids[i] = st.ID
			}
			return Rule{}, &LookupError{Kind: ErrUnknownStep, Workflow: w.Name, Step: stepID, Agent: agent, Known: ids}
		}
		if s.Agent != agent {
			return Rule{}, &LookupError{Kind: ErrStepAgentMismatch, Workflow: w.Name, Step: stepID, Agent: agent, StepAgent: s.Agent}
		}
		return w.rule(s), nil
	}
	var first *Step
	for i := range w.Steps {
		s := &w.Steps[i]
		if s.Agent != agent {
			continue
		}
		if len(s.CanClarify) > 0 {
			return w.rule(s), nil
		}
		if first == nil {
			first = s
		}
	}
	if first == nil {
		return Rule{}, &LookupError{Kind: ErrNoStep, Workflow: w.Name, Agent: agent}
	}
	return w.rule(first), nil
}

func (w *Workflow) rule(s *Step) Rule {
	return Rule{
		Workflow:        w.Name,
		Step:            s.ID,
		Agent:           s.Agent,
		CanClarify:      append([]string{}, s.CanClarify...),
		MaxRounds:       s.ClarifyMaxRounds,
		MaxRoundsNB:     s.ClarifyMaxRoundsNB,
		SLA:             time.Duration(s.ClarifySLAMinutes) * time.Minute,
		BlockingAllowed: s.ClarifyBlockingAllowed,
	}
}

// Rounds is how many rounds a question gets under the rule: blocking or not.
func (r Rule) Rounds(blocking bool) int {
	if blocking || r.MaxRoundsNB == 0 {
		return r.MaxRounds
	}
	return r.MaxRoundsNB
}

// Allows reports whether the rule lets its agent ask target (an agent name or "human").
func (r Rule) Allows(target string) bool {
	return target != "" && slices.Contains(r.CanClarify, target)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
