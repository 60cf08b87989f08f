package workflow

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustParse(t *testing.T, file, text string) *Workflow {
	t.Helper()
	w, err := parseWorkflow(file, []byte(text))
	require.NoError(t, err)
	return w
}

// TestStepDefaults proves the defaults for absent clarify keys (can_clarify = [],
// 5 rounds, 30 minutes, blocking allowed), that explicit values win, and where the
// workflow name comes from.
func TestStepDefaults(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		text      string
		wantName  string
		wantAsk   []string
		wantRound int
		wantNB    int // clarify_max_rounds_nonblocking; 0 means the default, 6
		wantSLA   int
		wantBlock bool
	}{
		{
			name:     "all absent",
			file:     "feature.toml",
			text:     "[[steps]]\nid = \"implement\"\nagent = \"engineer\"\n",
			wantName: "feature", wantAsk: []string{}, wantRound: 5, wantSLA: 30, wantBlock: true,
		},
		{
			name:     "explicit empty can_clarify",
			file:     "x/story.toml",
			text:     "[workflow]\nname = \"my-story\"\n[[steps]]\nid = \"s\"\nagent = \"engineer\"\ncan_clarify = []\n",
			wantName: "my-story", wantAsk: []string{}, wantRound: 5, wantSLA: 30, wantBlock: true,
		},
		{
			name: "all explicit",
			file: "bug.toml",
			text: "[[steps]]\nid = \"fix\"\nagent = \"engineer\"\ncan_clarify = [\"architect\", \"human\"]\n" +
				"clarify_max_rounds = 2\nclarify_sla_minutes = 90\nclarify_blocking_allowed = false\n",
			wantName: "bug", wantAsk: []string{"architect", "human"}, wantRound: 2, wantSLA: 90, wantBlock: false,
		},
		{
			name:     "bounds are inclusive",
			file:     "edge.toml",
			text:     "[[steps]]\nid = \"a\"\nagent = \"engineer\"\nclarify_max_rounds = 20\nclarify_sla_minutes = 1\n",
			wantName: "edge", wantAsk: []string{}, wantRound: 20, wantSLA: 1, wantBlock: true,
		},
		{
			name:     "non-blocking rounds set apart",
			file:     "nb.toml",
			text:     "[[steps]]\nid = \"a\"\nagent = \"engineer\"\nclarify_max_rounds = 3\nclarify_max_rounds_nonblocking = 9\n",
			wantName: "nb", wantAsk: []string{}, wantRound: 3, wantNB: 9, wantSLA: 30, wantBlock: true,
		},
		{
			name:     "workflow table without name",
			file:     filepath.Join("dir", "hotfix.toml"),
			text:     "[workflow]\ntype = \"bug\"\n[[steps]]\nid = \"a\"\nagent = \"engineer\"\nclarify_max_rounds = 1\n",
			wantName: "hotfix", wantAsk: []string{}, wantRound: 1, wantSLA: 30, wantBlock: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := mustParse(t, tt.file, tt.text)
			assert.Equal(t, tt.wantName, w.Name)
			assert.Equal(t, tt.file, w.File)
			require.Len(t, w.Steps, 1)
			s := w.Steps[0]
			assert.NotNil(t, s.CanClarify, "can_clarify is never nil")
			assert.Equal(t, tt.wantAsk, s.CanClarify)
			assert.Equal(t, tt.wantRound, s.ClarifyMaxRounds)
			if tt.wantNB == 0 {
				tt.wantNB = min(tt.wantRound+1, MaxClarifyRounds)
			}
			assert.Equal(t, tt.wantNB, s.ClarifyMaxRoundsNB)
			assert.Equal(t, tt.wantRound, w.rule(&s).Rounds(true), "a blocking question's rounds")
			assert.Equal(t, tt.wantNB, w.rule(&s).Rounds(false), "a non-blocking question's rounds")
			assert.Equal(t, tt.wantSLA, s.ClarifySLAMinutes)
			assert.Equal(t, tt.wantBlock, s.ClarifyBlockingAllowed)
		})
	}
}

const rulesTOML = `[workflow]
name = "feature"

[[steps]]
id = "prd"
agent = "product-manager"

[[steps]]
id = "architecture"
agent = "architect"
needs = ["prd"]
can_clarify = ["product-manager"]
clarify_max_rounds = 3
clarify_sla_minutes = 60

[[steps]]
id = "spike"
agent = "engineer"
needs = ["architecture"]

[[steps]]
id = "implement"
agent = "engineer"
needs = ["spike"]
can_clarify = ["architect", "product-manager", "human"]
clarify_blocking_allowed = false

[[steps]]
id = "bugfix"
agent = "engineer"
needs = ["implement"]
can_clarify = ["tester"]

[[steps]]
id = "review"
agent = "reviewer"
needs = ["implement"]
`

// TestRule proves Rule lookup by step, by agent (first step with a non-empty
// can_clarify, else the first step; never merged), and the typed errors for an agent
// without a step, an unknown step and a step owned by another agent.
func TestRule(t *testing.T) {
	w := mustParse(t, "feature.toml", rulesTOML)
	tests := []struct {
		name    string
		agent   string
		step    string
		want    Rule
		wantErr error
		errText string
	}{
		{
			name: "by step", agent: "architect", step: "architecture",
			want: Rule{Workflow: "feature", Step: "architecture", Agent: "architect",
				CanClarify: []string{"product-manager"}, MaxRounds: 3, MaxRoundsNB: 4, SLA: time.Hour, BlockingAllowed: true},
		},
		{
			name: "by step without can_clarify", agent: "engineer", step: "spike",
			want: Rule{Workflow: "feature", Step: "spike", Agent: "engineer",
				CanClarify: []string{}, MaxRounds: 5, MaxRoundsNB: 6, SLA: 30 * time.Minute, BlockingAllowed: true},
		},
		{
			name: "by step, later step of the same agent", agent: "engineer", step: "bugfix",
			want: Rule{Workflow: "feature", Step: "bugfix", Agent: "engineer",
				CanClarify: []string{"tester"}, MaxRounds: 5, MaxRoundsNB: 6, SLA: 30 * time.Minute, BlockingAllowed: true},
		},
		{
			name: "by agent picks the first step that may clarify", agent: "engineer",
			want: Rule{Workflow: "feature", Step: "implement", Agent: "engineer",
				CanClarify: []string{"architect", "product-manager", "human"}, MaxRounds: 5, MaxRoundsNB: 6, SLA: 30 * time.Minute},
		},
		{
			name: "by agent with no clarifying step picks its first step", agent: "reviewer",
			want: Rule{Workflow: "feature", Step: "review", Agent: "reviewer",
				CanClarify: []string{}, MaxRounds: 5, MaxRoundsNB: 6, SLA: 30 * time.Minute, BlockingAllowed: true},
		},
		{
			name: "agent with no step", agent: "ux-designer",
			wantErr: ErrNoStep, errText: `agent "ux-designer" has no step in workflow "feature"`,
		},
		{
			name: "step of another agent", agent: "engineer", step: "architecture",
			wantErr: ErrStepAgentMismatch,
			errText: `step "architecture" of workflow "feature" belongs to agent "architect", not "engineer"`,
		},
		{
			name: "unknown step", agent: "engineer", step: "deploy",
			wantErr: ErrUnknownStep,
			errText: `workflow "feature" has no step "deploy" (steps: prd, architecture, spike, implement, bugfix, review)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.Rule(tt.agent, tt.step)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				var le *LookupError
				require.True(t, errors.As(err, &le))
				assert.Equal(t, "feature", le.Workflow)
				assert.Equal(t, tt.agent, le.Agent)
				assert.Equal(t, tt.errText, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestRuleCanClarifyIsACopy proves a caller cannot change the workflow through a Rule.
func TestRuleCanClarifyIsACopy(t *testing.T) {
	w := mustParse(t, "feature.toml", rulesTOML)
	r, err := w.Rule("architect", "")
	require.NoError(t, err)
	r.CanClarify[0] = "engineer"
	assert.Equal(t, []string{"product-manager"}, w.Step("architecture").CanClarify)
}

// TestAllows proves Allows is exact membership in can_clarify.
func TestAllows(t *testing.T) {
	r := Rule{Agent: "engineer", CanClarify: []string{"architect", "product-manager", "human"}}
	none := Rule{Agent: "engineer", CanClarify: []string{}}
	tests := []struct {
		rule   Rule
		target string
		want   bool
	}{
		{r, "architect", true},
		{r, "product-manager", true},
		{r, "human", true},
		{r, "engineer", false},
		{r, "reviewer", false},
		{r, "Architect", false},
		{r, "architect ", false},
		{r, "", false},
		{none, "architect", false},
		{none, "human", false},
		{Rule{}, "architect", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.rule.Allows(tt.target), "%v.Allows(%q)", tt.rule.CanClarify, tt.target)
	}
}

// TestLoadAgentXFixtures proves files in the AgentX format, with all its passthrough
// keys, load unchanged, and the rules they give.
func TestLoadAgentXFixtures(t *testing.T) {
	set, err := Load(filepath.Join("testdata", "agentx"))
	require.NoError(t, err)
	assert.Equal(t, []string{"bug", "docs", "feature", "iterative-loop", "story"}, set.Names())
	assert.Equal(t, DefaultConfig().Priority, set.Config.Priority, "no config.toml: defaults")

	feature, err := set.Workflow("")
	require.NoError(t, err)
	assert.Equal(t, "feature", feature.Name)
	assert.Equal(t, "Standard feature development with full agent pipeline", feature.Description)
	assert.Equal(t, "feature", feature.Type)
	require.Len(t, feature.Steps, 9)

	impl := feature.Step("implement")
	require.NotNil(t, impl)
	assert.Equal(t, Step{
		ID: "implement", Title: "Implement code and tests", Agent: "engineer", Needs: []string{"architecture"},
		CanClarify: []string{"architect", "product-manager"}, ClarifyMaxRounds: 3, ClarifyMaxRoundsNB: 4, ClarifySLAMinutes: 60, ClarifyBlockingAllowed: true,
		Iterate: true, MaxIterations: 10,
		CompletionCriteria: "All acceptance criteria met, tests pass at 80% coverage, no lint errors, docs updated",
		StatusOnStart:      "In Progress", StatusOnComplete: "In Review",
		MaxRevisions: DefaultMaxRevisions, Line: 55,
	}, *impl)
	ux := feature.Step("ux")
	assert.True(t, ux.Optional)
	assert.Equal(t, "has_label:needs:ux", ux.Condition)
	assert.Equal(t, ".github/templates/UX-TEMPLATE.md", ux.Template)
	assert.Equal(t, "docs/ux/UX-{{issue_number}}.md", ux.Output)

	// The engineer owns implement and bugfix: implement is the one that may clarify.
	r, err := feature.Rule("engineer", "")
	require.NoError(t, err)
	assert.Equal(t, "implement", r.Step)
	assert.True(t, r.Allows("architect"))
	_, err = feature.Rule("customer-coach", "")
	assert.ErrorIs(t, err, ErrNoStep)

	bug, err := set.Workflow("bug")
	require.NoError(t, err)
	r, err = bug.Rule("engineer", "fix")
	require.NoError(t, err)
	assert.False(t, r.BlockingAllowed)
	assert.Equal(t, 2, r.MaxRounds)

	loop, err := set.Workflow("iterative-loop")
	require.NoError(t, err)
	assert.Equal(t, "story", loop.Type)
	r, err = loop.Rule("engineer", "")
	require.NoError(t, err)
	assert.Equal(t, "plan", r.Step, "no clarifying step: the first one")
	assert.False(t, r.Allows("architect"), "no can_clarify: may not ask")

	docs, err := set.Workflow("docs")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("testdata", "agentx", "workflows", "docs.toml"), docs.File)
	r, err = docs.Rule("engineer", "")
	require.NoError(t, err)
	assert.True(t, r.Allows(Human))

	// Each file also loads on its own, as `agentx workflow validate FILE` does.
	files, err := filepath.Glob(filepath.Join("testdata", "agentx", "workflows", "*.toml"))
	require.NoError(t, err)
	for _, f := range files {
		_, err := LoadWorkflowFile(f)
		assert.NoError(t, err, f)
	}
}

// TestStepLines proves Step.Line is the line of each [[steps]] header.
func TestStepLines(t *testing.T) {
	w := mustParse(t, "feature.toml", rulesTOML)
	lines := map[string]int{}
	for _, s := range w.Steps {
		lines[s.ID] = s.Line
	}
	assert.Equal(t, map[string]int{"prd": 4, "architecture": 8, "spike": 16, "implement": 21, "bugfix": 28, "review": 34}, lines)
}

// TestInlineSteps proves steps written as an inline array of tables load, and that
// their errors fall back to the line of the steps key.
func TestInlineSteps(t *testing.T) {
	w := mustParse(t, "inline.toml", "steps = [\n  {id = \"a\", agent = \"engineer\", can_clarify = [\"architect\"]},\n]\n")
	require.Len(t, w.Steps, 1)
	assert.Equal(t, []string{"architect"}, w.Steps[0].CanClarify)
	assert.Equal(t, 1, w.Steps[0].Line)

	_, err := parseWorkflow("inline.toml", []byte("# steps\nsteps = [{id = \"a\", agent = \"engineer\", clarify_max_rounds = 0}]\n"))
	require.EqualError(t, err, "inline.toml:2: steps.clarify_max_rounds: must be between 1 and 20, got 0")

	_, err = parseWorkflow("inline.toml", []byte("steps = [1, 2]\n"))
	require.EqualError(t, err, "inline.toml:1: steps: want an array of tables, got an array containing an integer (hint: write each step as a [[steps]] table)")
}

// TestErrorFormat proves the text of Error and Errors, and that callers can reach both
// with errors.As.
func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{File: "a.toml", Line: 3, Key: "steps.agent", Msg: "required"}, "a.toml:3: steps.agent: required"},
		{&Error{File: "a.toml", Line: 3, Key: "k", Msg: "bad", Hint: "fix it"}, "a.toml:3: k: bad (hint: fix it)"},
		{&Error{File: "a.toml", Key: "steps", Msg: "workflow has no steps"}, "a.toml: steps: workflow has no steps"},
		{&Error{File: "a.toml", Line: 7, Msg: "invalid TOML: x"}, "a.toml:7: invalid TOML: x"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.err.Error())
	}

	_, err := LoadWorkflowFile(filepath.Join("testdata", "bad", "sla-zero.toml"))
	var es Errors
	require.True(t, errors.As(err, &es))
	require.Len(t, es, 2)
	assert.Equal(t, es[0].Error()+"\n"+es[1].Error(), err.Error(), "one error per line")
	var one *Error
	require.True(t, errors.As(err, &one), "errors.As reaches the first *Error")
	assert.Equal(t, 5, one.Line)
	assert.Equal(t, "steps.clarify_sla_minutes", one.Key)
}

// TestValidateMessages proves smaller validation cases not covered by the golden
// files, one message each.
func TestValidateMessages(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"empty agent", "[[steps]]\nid = \"a\"\nagent = \"\"\n",
			"x.toml:3: steps.agent: must not be empty"},
		{"empty name", "[workflow]\nname = \"\"\n[[steps]]\nid = \"a\"\nagent = \"engineer\"\n",
			"x.toml:2: workflow.name: must not be empty"},
		{"byte order mark", "\ufeff[[steps]]\nid = \"a\"\nagent = \"engineer\"\nclarify_sla_minutes = 0\n",
			"x.toml:4: steps.clarify_sla_minutes: must be greater than 0, got 0"},
		{"sub-table in a step", "[[steps]]\nid = \"a\"\nagent = \"engineer\"\n[steps.extra]\nk = 1\n",
			"x.toml:4: steps.extra: unknown key (hint: known keys: id, title, agent, needs, can_clarify, clarify_max_rounds, clarify_max_rounds_nonblocking, clarify_sla_minutes, clarify_blocking_allowed, iterate, max_iterations, completion_criteria, status_on_start, status_on_complete, output, template, optional, condition, max_revisions, scope, evaluate)"},
		{"case matters", "Workflow = {name = \"x\"}\n[[steps]]\nid = \"a\"\nagent = \"engineer\"\n",
			`x.toml:1: Workflow: unknown key (hint: did you mean "workflow"? names are case-sensitive)`},
		{"two-step cycle", "[[steps]]\nid = \"a\"\nagent = \"engineer\"\nneeds = [\"b\"]\n[[steps]]\nid = \"b\"\nagent = \"architect\"\nneeds = [\"a\"]\n",
			"x.toml:4: steps.needs: needs cycle: a -> b -> a (hint: each step needs only steps that finish before it)"},
		{"human may be asked but not twice the same way", "[[steps]]\nid = \"a\"\nagent = \"engineer\"\ncan_clarify = [\"human\", \"HUMAN\"]\n",
			`x.toml:4: steps.can_clarify: invalid agent name "HUMAN" (hint: agent names are lowercase letters, digits and '-', e.g. "product-manager"; "human" asks a person)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseWorkflow("x.toml", []byte(tt.text))
			require.EqualError(t, err, tt.want)
		})
	}
}
