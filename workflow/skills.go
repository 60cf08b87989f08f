package workflow

import (
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
)

// DefaultSkillsDir is where Claude Code loads a project's skills from,
// relative to the repository root: .claude/skills/NAME/SKILL.md.
const DefaultSkillsDir = ".claude/skills"

// SkillsConfig is the [skills] table: where agentx skills drafts, lists
// and validates skills.
type SkillsConfig struct {
	// Dir is the skills directory, relative to the repository root, with
	// "/" between directories (default .claude/skills).
	Dir string `json:"dir"`
}

// skills decodes the [skills] table into c.
func (d *doc) skills(prim toml.Primitive, c *SkillsConfig) {
	p := []string{"skills"}
	t, ok := d.table(prim, p, p)
	if !ok {
		return
	}
	def := d.decodeTable(t, p, p, []field{{"dir", &c.Dir, "a string"}})
	if def["dir"] {
		if why := SkillsDirProblem(c.Dir); why != "" {
			d.addf(with(p, "dir"), with(p, "dir"), `a directory inside the repository, e.g. ".claude/skills" (Claude Code's project skills)`, "%q: %s", c.Dir, why)
		}
	}
}

// SkillsDirProblem says what is wrong with a [skills] dir, or "" when it
// is usable: a relative, slash-separated path inside the repository, with
// no empty, "." or ".." element and no control character.
func SkillsDirProblem(dir string) string {
	switch {
	case strings.TrimSpace(dir) == "":
		return "must not be empty"
	case strings.IndexFunc(dir, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return "must not hold control or invisible characters"
	case strings.Contains(dir, `\`):
		return `use "/" to separate directories`
	case strings.HasPrefix(dir, "/") || (len(dir) > 1 && dir[1] == ':'):
		return "absolute path: the skills directory is relative to the repository root"
	}
	for _, el := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if el == "" || el == "." || el == ".." {
			return `"", "." and ".." are not allowed as path elements: the skills directory stays inside the repository`
		}
	}
	return ""
}
