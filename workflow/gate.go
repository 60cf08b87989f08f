package workflow

import (
	"path"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/words"

	"github.com/BurntSushi/toml"
)

// Defaults and limits of the supervisor gate's step keys.
const (
	// DefaultMaxRevisions is how many times a worker's work is sent back
	// for revision before the next attempt that does not pass escalates.
	DefaultMaxRevisions = 2
	// MaxMaxRevisions bounds max_revisions.
	MaxMaxRevisions = 10
	// DefaultCheckTimeout bounds one run of a check.
	DefaultCheckTimeout = 10 * time.Minute
)

// Check is one [[steps.evaluate]] table: a command run when the step's
// agent finishes an issue, whose verdict is PASS, FAIL or NEEDS_REVISION.
type Check struct {
	Name    string   `json:"name"`
	Command []string `json:"command"` // argv, never a shell string
	Timeout Duration `json:"timeout"`
	// FailExitCodes are the exit codes that mean a hard FAIL (escalated at
	// once); any other non-zero exit needs revision, 0 passes.
	FailExitCodes []int `json:"fail_exit_codes,omitempty"`
	// Review: the command gets the diff and the context on stdin.
	Review bool `json:"review,omitempty"`
}

// gate decodes and checks the supervisor gate's keys of one step:
// evaluate, max_revisions and scope.
func (d *doc) gate(s *Step, p, plain []string, defined map[string]bool, evaluate toml.Primitive) {
	at := func(k string) ([]string, []string) { return with(p, k), with(plain, k) }
	if defined["max_revisions"] && (s.MaxRevisions < 0 || s.MaxRevisions > MaxMaxRevisions) {
		kp, pp := at("max_revisions")
		d.addf(kp, pp, "0 escalates the first attempt that does not pass", "must be between 0 and %d, got %d", MaxMaxRevisions, s.MaxRevisions)
	}
	if defined["scope"] {
		kp, pp := at("scope")
		for _, pat := range s.Scope {
			if why := ScopePatternProblem(pat); why != "" {
				d.addf(kp, pp, `paths relative to the repository root, "**" for any depth, e.g. ["src/components/**", "package.json"]`, "%q: %s", pat, why)
			}
		}
	}
	if defined["evaluate"] {
		kp, pp := at("evaluate")
		var raw any
		if err := d.md.PrimitiveDecode(evaluate, &raw); err != nil || !isTableArray(raw) {
			d.addf(kp, pp, `write each check as a [[steps.evaluate]] table with name and command`, "want an array of tables, got %s", typeName(raw))
			return
		}
		var prims []toml.Primitive
		if err := d.md.PrimitiveDecode(evaluate, &prims); err != nil {
			d.addf(kp, pp, "", "%s", tomlMsg(err))
			return
		}
		var names []string
		for i, cp := range prims {
			if c, ok := d.check(cp, with(kp, idx(i)), pp, s, &names); ok {
				s.Evaluate = append(s.Evaluate, c)
			}
		}
	}
}

// check decodes one [[steps.evaluate]] table.
func (d *doc) check(prim toml.Primitive, p, plain []string, s *Step, names *[]string) (Check, bool) {
	c := Check{Timeout: Duration{DefaultCheckTimeout}}
	t, ok := d.table(prim, p, plain)
	if !ok {
		return c, false
	}
	n := len(d.errs)
	def := d.decodeTable(t, p, plain, []field{
		{"name", &c.Name, "a string"},
		{"command", &c.Command, "an array of strings"},
		{"timeout", &c.Timeout, "a duration string"},
		{"fail_exit_codes", &c.FailExitCodes, "an array of integers"},
		{"review", &c.Review, "a boolean"},
	})
	if _, present := t["name"]; !present {
		d.addf(with(p, "name"), with(plain, "name"), `e.g. name = "tests"`, "required")
	} else if def["name"] && !words.Slug(c.Name, "_-") {
		d.addf(with(p, "name"), with(plain, "name"), `lowercase letters, digits, '-' and '_', e.g. "tests"`, "invalid check name %q", c.Name)
	} else if def["name"] && slices.Contains(*names, c.Name) {
		d.addf(with(p, "name"), with(plain, "name"), "check names must be unique within a step", "step %q has two checks named %q", s.ID, c.Name)
	}
	*names = append(*names, c.Name)
	const cmdHint = `an argv array, e.g. command = ["go", "test", "./..."]`
	if _, present := t["command"]; !present {
		d.addf(with(p, "command"), with(plain, "command"), cmdHint, "required")
	} else if def["command"] && (len(c.Command) == 0 || c.Command[0] == "") {
		d.addf(with(p, "command"), with(plain, "command"), cmdHint, "must not be empty")
	}
	if def["timeout"] && c.Timeout.Duration <= 0 {
		d.addf(with(p, "timeout"), with(plain, "timeout"), "", "must be greater than 0, got %q", c.Timeout.String())
	}
	for _, code := range c.FailExitCodes {
		if code <= 0 || code > 255 {
			d.addf(with(p, "fail_exit_codes"), with(plain, "fail_exit_codes"), "exit codes 1 to 255; 0 always passes", "%d is not an exit code that can mean a failure", code)
		}
	}
	return c, len(d.errs) == n
}

// ScopePatternProblem says what is wrong with a write-scope pattern, or ""
// when it is usable: a slash-separated path relative to the repository
// root, with no "." or ".." element, in path.Match syntax where "**" as a
// whole element matches any number of directories.
func ScopePatternProblem(pat string) string {
	switch {
	case strings.TrimSpace(pat) == "":
		return "empty pattern"
	case strings.Contains(pat, `\`):
		return `use "/" to separate directories`
	case strings.HasPrefix(pat, "/") || (len(pat) > 1 && pat[1] == ':'):
		return "absolute path: scope patterns are relative to the repository root"
	}
	for _, el := range strings.Split(strings.TrimSuffix(pat, "/"), "/") {
		switch {
		case el == "" || el == "." || el == "..":
			return `"", "." and ".." are not allowed as path elements`
		case el == "**":
		case strings.Contains(el, "**"):
			return `"**" must be a whole path element, as in "src/**/*.go"`
		default:
			if _, err := path.Match(el, ""); err != nil {
				return "bad glob: " + err.Error()
			}
		}
	}
	return ""
}

// Gated returns the agent's step to evaluate in this workflow: the step
// named stepID (which must be the agent's), else the agent's first step
// with checks. It is nil when there is none: nothing to evaluate.
func (w *Workflow) Gated(agent, stepID string) (*Step, error) {
	if stepID != "" {
		if _, err := w.Rule(agent, stepID); err != nil {
			return nil, err
		}
		return w.Step(stepID), nil
	}
	for i := range w.Steps {
		if s := &w.Steps[i]; s.Agent == agent && len(s.Evaluate) > 0 {
			return s, nil
		}
	}
	return nil, nil
}

// Scoped returns the agent's step whose write scope applies: the step
// named stepID (which must be the agent's), else the agent's first step
// with a scope. It is nil when the agent has none: unrestricted.
func (w *Workflow) Scoped(agent, stepID string) (*Step, error) {
	if stepID != "" {
		if _, err := w.Rule(agent, stepID); err != nil {
			return nil, err
		}
		return w.Step(stepID), nil
	}
	for i := range w.Steps {
		if s := &w.Steps[i]; s.Agent == agent && len(s.Scope) > 0 {
			return s, nil
		}
	}
	return nil, nil
}
