package workflow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGateKeys(t *testing.T) {
	w, err := parseWorkflow("gated.toml", []byte(`
[[steps]]
id = "implement"
agent = "engineer"
max_revisions = 1
scope = ["src/components/**", "tests/**/*_test.go", "package.json"]

[[steps.evaluate]]
name = "tests"
command = ["go", "test", "./..."]
timeout = "2m"
fail_exit_codes = [3]

[[steps.evaluate]]
name = "review"
command = ["./review.sh"]
review = true

[[steps]]
id = "docs"
agent = "writer"
`))
	require.NoError(t, err)
	s := w.Step("implement")
	assert.Equal(t, 1, s.MaxRevisions)
	assert.Equal(t, []string{"src/components/**", "tests/**/*_test.go", "package.json"}, s.Scope)
	require.Len(t, s.Evaluate, 2)
	assert.Equal(t, Check{Name: "tests", Command: []string{"go", "test", "./..."}, Timeout: Duration{2 * time.Minute}, FailExitCodes: []int{3}}, s.Evaluate[0])
	assert.Equal(t, Check{Name: "review", Command: []string{"./review.sh"}, Timeout: Duration{DefaultCheckTimeout}, Review: true}, s.Evaluate[1])

	docs := w.Step("docs")
	assert.Equal(t, DefaultMaxRevisions, docs.MaxRevisions, "default")
	assert.Empty(t, docs.Scope, "unrestricted by default")

	g, err := w.Gated("engineer", "")
	require.NoError(t, err)
	assert.Equal(t, "implement", g.ID)
	g, err = w.Gated("writer", "")
	require.NoError(t, err)
	assert.Nil(t, g, "no checks: nothing to evaluate")
	_, err = w.Gated("writer", "implement")
	assert.Error(t, err, "another agent's step")
	sc, err := w.Scoped("engineer", "")
	require.NoError(t, err)
	assert.Equal(t, "implement", sc.ID)
	sc, err = w.Scoped("nobody", "")
	require.NoError(t, err)
	assert.Nil(t, sc)
}

func TestScopePatternProblem(t *testing.T) {
	for pat, bad := range map[string]bool{
		"src/**": false, "**": false, "**/*.go": false, "package.json": false, "docs/": false, "a/[ab]*.md": false,
		"": true, "/abs": true, "C:/x": true, "../x": true, "a/./b": true, "a//b": true, "a**": true, `a\b`: true, "a/[": true,
	} {
		assert.Equal(t, bad, ScopePatternProblem(pat) != "", "%q: %s", pat, ScopePatternProblem(pat))
	}
}
