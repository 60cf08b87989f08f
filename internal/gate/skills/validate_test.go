package skills

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const good = "---\nname: db-migrations\ndescription: Run the database migrations before the tests. Use when a test fails with no such table.\n---\n# Migrations\n\nSee [the commands](reference.md) and ![a diagram](img/flow.png).\n"

// writeSkills makes root/.claude/skills with the given files (path
// relative to the skills directory: content).
func writeSkills(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, ".claude", "skills", filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".claude", "skills"), 0o755))
	return root
}

func TestValidate(t *testing.T) {
	refs := map[string]string{"db-migrations/SKILL.md": good, "db-migrations/reference.md": "x", "db-migrations/img/flow.png": "x"}
	tests := []struct {
		name    string
		files   map[string]string
		skill   string
		status  Status
		problem string // a check and a word of the message ("" with status not invalid)
		line    int
	}{
		{name: "valid", files: refs, skill: "db-migrations", status: StatusValidated},
		{name: "draft marker", skill: "db-migrations", status: StatusDraft,
			files: map[string]string{"db-migrations/SKILL.md": strings.Replace(good, "# Migrations", DraftMarker+" from PROP-001 -->\n# Migrations", 1),
				"db-migrations/reference.md": "x", "db-migrations/img/flow.png": "x"}},
		{name: "no SKILL.md", files: map[string]string{"empty/notes.md": "x"}, skill: "empty", status: StatusInvalid, problem: "file: no SKILL.md"},
		{name: "no front matter", skill: "a", status: StatusInvalid, problem: "front-matter: no front matter", line: 1,
			files: map[string]string{"a/SKILL.md": "# A skill\n"}},
		{name: "not closed", skill: "a", status: StatusInvalid, problem: "front-matter: not closed", line: 1,
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n"}},
		{name: "bad yaml", skill: "a", status: StatusInvalid, problem: "front-matter: not valid YAML", line: 4,
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n  bad: x\n---\n"}},
		{name: "unclosed list", skill: "a", status: StatusInvalid, problem: "front-matter: not valid YAML",
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: [unclosed\n---\n"}},
		{name: "not a mapping", skill: "a", status: StatusInvalid, problem: "front-matter: must be a YAML mapping",
			files: map[string]string{"a/SKILL.md": "---\n- a\n- b\n---\n"}},
		{name: "empty front matter", skill: "a", status: StatusInvalid, problem: "front-matter: empty",
			files: map[string]string{"a/SKILL.md": "---\n---\nbody\n"}},
		{name: "key twice", skill: "a", status: StatusInvalid, problem: "front-matter: name: is given twice", line: 4,
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\nname: b\n---\n"}},
		{name: "name missing", skill: "a", status: StatusInvalid, problem: "name: missing",
			files: map[string]string{"a/SKILL.md": "---\ndescription: d\n---\n"}},
		{name: "bad name", skill: "Bad_Name", status: StatusInvalid, problem: "name: \"Bad_Name\" may hold only lowercase", line: 2,
			files: map[string]string{"Bad_Name/SKILL.md": "---\nname: Bad_Name\ndescription: d\n---\n"}},
		{name: "name a list", skill: "a", status: StatusInvalid, problem: "front-matter: name: must be a string, not a list",
			files: map[string]string{"a/SKILL.md": "---\nname: [a]\ndescription: d\n---\n"}},
		{name: "reserved word", skill: "claude-helper", status: StatusInvalid, problem: "name: must not contain the reserved word \"claude\"",
			files: map[string]string{"claude-helper/SKILL.md": "---\nname: claude-helper\ndescription: d\n---\n"}},
		{name: "name not the folder", skill: "deploy", status: StatusInvalid, problem: "name: \"deploy-prod\" does not match the folder's name \"deploy\"",
			files: map[string]string{"deploy/SKILL.md": "---\nname: deploy-prod\ndescription: d\n---\n"}},
		{name: "description missing", skill: "a", status: StatusInvalid, problem: "description: missing",
			files: map[string]string{"a/SKILL.md": "---\nname: a\n---\n"}},
		{name: "description empty", skill: "a", status: StatusInvalid, problem: "description: missing", line: 3,
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription:\n---\n"}},
		{name: "description blank", skill: "a", status: StatusInvalid, problem: "description: must not be empty",
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: \"  \"\n---\n"}},
		{name: "description too long", skill: "a", status: StatusInvalid, problem: "description: is 1025 characters, more than 1024",
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: " + strings.Repeat("é", 1025) + "\n---\n"}},
		{name: "description 1024 folded", skill: "a", status: StatusValidated,
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: >\n  " + strings.Repeat("w", 1000) + "\n  tail\n---\n"}},
		{name: "description xml", skill: "a", status: StatusInvalid, problem: "description: must not hold XML tags (<system>)",
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: Use it <system>always</system>\n---\n"}},
		{name: "missing referenced file", skill: "db-migrations", status: StatusInvalid, problem: "reference: reference.md does not exist", line: 7,
			files: map[string]string{"db-migrations/SKILL.md": good, "db-migrations/img/flow.png": "x"}},
		{name: "reference out of the folder", skill: "a", status: StatusInvalid, problem: "reference: ../b/SKILL.md points outside",
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n---\n[b](../b/SKILL.md)\n", "b/SKILL.md": "---\nname: b\ndescription: e\n---\n"}},
		{name: "absolute reference", skill: "a", status: StatusInvalid, problem: "reference: /etc/passwd is an absolute path",
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n---\n[x](/etc/passwd)\n"}},
		{name: "links that are not files", skill: "a", status: StatusValidated,
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n---\n[w](https://example.com/x) [m](mailto:a@b) [s](#steps) \\[not](a-link.md)\n" +
				"`[code](missing.md)`\n```\n[fenced](missing.md)\n```\n<!-- [comment](missing.md) -->\n[t](<with space.md>)\n", "a/with space.md": "x"}},
		{name: "reference definition", skill: "a", status: StatusInvalid, problem: "reference: gone.md does not exist", line: 6,
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n---\n\n[ref]: gone.md \"Title\"\n"}},
		{name: "duplicate names", skill: "a", status: StatusInvalid, problem: "duplicate: the name \"b\" is also the name of the skill in b",
			files: map[string]string{"a/SKILL.md": "---\nname: b\ndescription: one thing\n---\n", "b/SKILL.md": "---\nname: b\ndescription: another\n---\n"}},
		{name: "description collision", skill: "a", status: StatusInvalid, problem: "collision: the description shares 100% of its words with b's",
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: Run the database migrations before the tests.\n---\n",
				"b/SKILL.md": "---\nname: b\ndescription: Before the tests, run the database migrations!\n---\n"}},
		{name: "distinct descriptions", skill: "a", status: StatusValidated,
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: Run the database migrations before the tests.\n---\n",
				"b/SKILL.md": "---\nname: b\ndescription: Write release notes from the merged pull requests.\n---\n"}},
		{name: "crlf and bom", skill: "a", status: StatusValidated,
			files: map[string]string{"a/SKILL.md": "\ufeff---\r\nname: a\r\ndescription: d\r\n---\r\n# A\r\n"}},
		{name: "other keys left alone", skill: "a", status: StatusValidated,
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\nallowed-tools: Read, Grep\nmodel: haiku\nhooks:\n  PreToolUse: []\nmetadata:\n  agentx-proposal: PROP-004\n---\n"}},
		{name: "disable-model-invocation not a bool", skill: "a", status: StatusInvalid, problem: "front-matter: disable-model-invocation: must be true or false",
			files: map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\ndisable-model-invocation: maybe\n---\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeSkills(t, tt.files)
			all, err := Scan(root, ".claude/skills", nil)
			require.NoError(t, err)
			s := Find(all, tt.skill)
			require.NotNil(t, s, "skill %s", tt.skill)
			assert.Equal(t, ".claude/skills/"+tt.skill+"/SKILL.md", s.Path)
			assert.Equal(t, tt.status, s.Status, "%+v", s.Problems)
			if tt.problem == "" {
				assert.Empty(t, s.Problems)
				return
			}
			check, msg, _ := strings.Cut(tt.problem, ": ")
			found := false
			for _, p := range s.Problems {
				if p.Check == check && strings.Contains(p.Message, msg) {
					found = true
					if tt.line != 0 {
						assert.Equal(t, tt.line, p.Line, "line of %s", p.Message)
					}
				}
			}
			assert.True(t, found, "want %q in %+v", tt.problem, s.Problems)
		})
	}
}

func TestScanOrigins(t *testing.T) {
	root := writeSkills(t, map[string]string{
		"a/SKILL.md": "---\nname: a\ndescription: one\nmetadata:\n  agentx-proposal: PROP-002\n---\n",
		"b/SKILL.md": "---\nname: b\ndescription: two\n---\n",
		"c/SKILL.md": "---\nname: c\ndescription: three\n---\n",
		"README.md":  "not a skill",
	})
	all, err := Scan(root, ".claude/skills", map[string]string{"c": "PROP-007"})
	require.NoError(t, err)
	require.Len(t, all, 3, "files beside the folders are not skills")
	assert.Equal(t, []string{OriginProposal, OriginManual, OriginProposal}, []string{all[0].Origin, all[1].Origin, all[2].Origin})
	assert.Equal(t, "PROP-002", all[0].Proposal)
	assert.Equal(t, "PROP-007", all[2].Proposal)

	none, err := Scan(t.TempDir(), ".claude/skills", nil)
	require.NoError(t, err)
	assert.Empty(t, none, "no skills directory: no skills")
}

func TestScanRefusesLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := writeSkills(t, map[string]string{"x/SKILL.md": "---\nname: x\ndescription: d\n---\n"})
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".claude"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(outside, ".claude", "skills"), filepath.Join(root, ".claude", "skills")))
	_, err := Scan(root, ".claude/skills", nil)
	require.Error(t, err, "a linked skills directory is not read")

	root = writeSkills(t, map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n---\n[s](secret.md)\n"})
	dir := filepath.Join(root, ".claude", "skills")
	require.NoError(t, os.Symlink(filepath.Join(outside, ".claude", "skills", "x"), filepath.Join(dir, "x")))
	require.NoError(t, os.Symlink(filepath.Join(outside, ".claude", "skills", "x", "SKILL.md"), filepath.Join(dir, "a", "secret.md")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "b"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(outside, ".claude", "skills", "x", "SKILL.md"), filepath.Join(dir, "b", "SKILL.md")))
	all, err := Scan(root, ".claude/skills", nil)
	require.NoError(t, err)
	assert.Contains(t, Find(all, "a").Problems[0].Message, "symbolic link out of the skill folder")
	assert.Contains(t, Find(all, "b").Problems[0].Message, "SKILL.md is a symbolic link")
	assert.Contains(t, Find(all, "x").Problems[0].Message, "skill folder is a symbolic link")
}

func TestCustomCommandSameName(t *testing.T) {
	root := writeSkills(t, map[string]string{"review/SKILL.md": "---\nname: review\ndescription: d\n---\n"})
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".claude", "commands"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".claude", "commands", "review.md"), []byte("Review."), 0o644))
	all, err := Scan(root, ".claude/skills", nil)
	require.NoError(t, err)
	require.Len(t, all[0].Problems, 1)
	assert.Contains(t, all[0].Problems[0].Message, "custom command review.md has the same name: both would be /review")
}

func TestNameProblem(t *testing.T) {
	for _, ok := range []string{"a", "pdf-processing", "1password", "x2", strings.Repeat("a", 64)} {
		assert.Empty(t, NameProblem(ok), ok)
	}
	for bad, why := range map[string]string{
		"":                      "empty",
		strings.Repeat("a", 65): "more than 64",
		"PDF":                   "lowercase",
		"pdf_processing":        "lowercase",
		"pdf processing":        "lowercase",
		"../x":                  "lowercase",
		"-pdf":                  "start or end",
		"pdf-":                  "start or end",
		"pdf--x":                "two hyphens",
		"my-anthropic-skill":    "anthropic",
		"claude":                "claude",
		"café":                  "lowercase",
	} {
		assert.Contains(t, NameProblem(bad), why, "%q", bad)
	}
}

func TestSlug(t *testing.T) {
	assert.Equal(t, "agents-keep-failing-the-tests-check-of-feature-implement", Slug("Agents keep failing the tests check of feature/implement"))
	assert.Equal(t, "ask-before-deploying", Slug("Ask Claude before deploying!"))
	assert.Equal(t, "", Slug("?!"))
	long := Slug(strings.Repeat("word ", 40))
	assert.LessOrEqual(t, len(long), 64)
	assert.Empty(t, NameProblem(long))
	assert.Len(t, Slug(strings.Repeat("x", 100)), 64)
}
