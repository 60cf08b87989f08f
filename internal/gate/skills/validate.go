package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/textsim"
)

// FileName is the file of a skill inside its folder.
const FileName = "SKILL.md"

// MaxFileSize is the largest SKILL.md read; Claude's guidance keeps one
// under 500 lines.
const MaxFileSize = 1 << 20

// CollisionSimilarity is the word-set similarity at or above which two
// skills' descriptions collide: Claude picks a skill by its description,
// and could not tell these apart.
const CollisionSimilarity = 0.8

// DraftMarker starts the line that marks a skill as a draft; a person
// deletes it once the instructions are written.
const DraftMarker = "<!-- agentx:draft"

// Status is where a skill stands.
type Status string

// The statuses: a draft passes the checks but still holds the draft
// marker; a validated skill passes them without it; an invalid one has
// problems.
const (
	StatusDraft     Status = "draft"
	StatusValidated Status = "validated"
	StatusInvalid   Status = "invalid"
)

// Statuses lists them.
var Statuses = []Status{StatusDraft, StatusValidated, StatusInvalid}

// The origins of a skill.
const (
	OriginManual   = "manual"   // written by hand
	OriginProposal = "proposal" // drafted from a proposal
)

// The checks a problem comes from.
const (
	CheckFile        = "file"         // the folder, SKILL.md itself
	CheckFrontMatter = "front-matter" // present, closed, YAML, keys
	CheckName        = "name"
	CheckDescription = "description"
	CheckReference   = "reference" // a linked file
	CheckDuplicate   = "duplicate" // a name another skill or command has
	CheckCollision   = "collision" // a description too close to another's
)

// Checks lists them.
var Checks = []string{CheckFile, CheckFrontMatter, CheckName, CheckDescription, CheckReference, CheckDuplicate, CheckCollision}

// Problem is one thing wrong with a skill.
type Problem struct {
	Line    int    `json:"line,omitempty"` // in SKILL.md, 1-based
	Check   string `json:"check"`
	Message string `json:"message"`
}

// Skill is one folder of the skills directory.
type Skill struct {
	Name        string    `json:"name"` // the folder's name
	Path        string    `json:"path"` // its SKILL.md, relative to the repository root, "/"-separated
	Description string    `json:"description,omitempty"`
	Origin      string    `json:"origin"`             // OriginManual or OriginProposal
	Proposal    string    `json:"proposal,omitempty"` // the proposal it was drafted from
	Status      Status    `json:"status"`
	Problems    []Problem `json:"problems"`

	fmName string // the front matter's name, when it has one
}

func (s *Skill) add(line int, check, format string, args ...any) {
	s.Problems = append(s.Problems, Problem{Line: line, Check: check, Message: fmt.Sprintf(format, args...)})
}

// Scan reads and checks every skill in root/dir (dir relative to the
// repository root root, "/"-separated): each folder is a skill, in name
// order; files beside the folders and hidden entries are not skills. A
// missing directory holds none. origins maps a skill's folder name to the
// proposal recorded as its origin (the proposals' drafts). The directory,
// or one on the way to it, being a symbolic link is an error: agentx
// reads no skills from elsewhere.
func Scan(root, dir string, origins map[string]string) ([]*Skill, error) {
	abs := filepath.Join(root, filepath.FromSlash(dir))
	if err := atomicfile.CheckNoLinks(root, abs); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return []*Skill{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	out := []*Skill{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			s := &Skill{Name: e.Name(), Path: path.Join(dir, e.Name(), FileName), Problems: []Problem{}}
			s.add(0, CheckFile, "the skill folder is a symbolic link: agentx does not follow it; put the skill itself here")
			out = append(out, s)
			continue
		}
		if !e.IsDir() {
			continue
		}
		out = append(out, check(abs, dir, e.Name()))
	}
	crossCheck(out, filepath.Join(filepath.Dir(abs), "commands"))
	for _, s := range out {
		if p := origins[s.Name]; p != "" {
			s.Proposal = p
		}
		s.Origin = OriginManual
		if s.Proposal != "" {
			s.Origin = OriginProposal
		}
		if len(s.Problems) > 0 {
			s.Status = StatusInvalid
		}
	}
	return out, nil
}

// check reads and checks the skill in folder name of abs.
func check(abs, dir, name string) *Skill {
	s := &Skill{Name: name, Path: path.Join(dir, name, FileName), Problems: []Problem{}, Status: StatusValidated}
	folder := filepath.Join(abs, name)
	data, err := readSkill(filepath.Join(folder, FileName))
	if err != nil {
		s.add(0, CheckFile, "%s", err)
		return s
	}
	fm, body, keys, err := ParseFrontMatter(data)
	for _, k := range keys {
		s.add(k.Line, CheckFrontMatter, "%s: %s", k.Key, k.Msg)
	}
	if err != nil {
		var fe *FrontMatterError
		if errors.As(err, &fe) {
			s.add(fe.Line, CheckFrontMatter, "%s", fe.Msg)
		} else {
			s.add(0, CheckFrontMatter, "%s", err)
		}
		return s
	}
	s.Proposal = fm.Proposal
	switch {
	case !fm.HasName:
		s.add(max(fm.NameLine, 1), CheckName, "missing: the front matter needs name: %s (the folder's name)", name)
	case NameProblem(fm.Name) != "":
		s.add(fm.NameLine, CheckName, "%q %s", fm.Name, NameProblem(fm.Name))
	case fm.Name != name:
		s.add(fm.NameLine, CheckName, "%q does not match the folder's name %q", fm.Name, name)
	}
	if fm.HasName {
		s.fmName = fm.Name
	}
	if !fm.HasDesc {
		s.add(max(fm.DescLine, 1), CheckDescription, "missing: the front matter needs a description, what the skill does and when to use it (Claude reads it to decide)")
	} else if p := DescriptionProblem(fm.Description); p != "" {
		s.add(fm.DescLine, CheckDescription, "%s", p)
	} else {
		s.Description = fm.Description
	}
	for _, r := range Refs(body, fm.End+1) {
		if p := RefProblem(folder, r.Target); p != "" {
			s.add(r.Line, CheckReference, "%s %s", r.Target, p)
		}
	}
	if isDraft(body) {
		s.Status = StatusDraft
	}
	return s
}

// isDraft reports whether body holds the draft marker.
func isDraft(body []byte) bool {
	for _, l := range bytes.Split(body, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimSpace(l), []byte(DraftMarker)) {
			return true
		}
	}
	return false
}

// readSkill reads a SKILL.md: a regular file (not a link, a FIFO, a
// device), at most MaxFileSize bytes.
func readSkill(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("no %s in the skill folder", FileName)
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s is a symbolic link: agentx does not follow it", FileName)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", FileName)
	case fi.Size() > MaxFileSize:
		return nil, fmt.Errorf("%s is %d bytes, more than %d: move the detail to files it links to", FileName, fi.Size(), MaxFileSize)
	}
	data, err := atomicfile.ReadAtMost(p, MaxFileSize)
	if errors.Is(err, atomicfile.ErrTooLarge) {
		return nil, fmt.Errorf("%s is more than %d bytes", FileName, MaxFileSize)
	}
	return data, err
}

// crossCheck finds what concerns two skills: a name twice, a name a
// custom command in commands has too, descriptions that collide.
func crossCheck(all []*Skill, commands string) {
	for i, s := range all {
		if s.fmName == "" {
			continue
		}
		for j, o := range all {
			if i != j && strings.EqualFold(s.fmName, o.fmName) {
				s.add(0, CheckDuplicate, "the name %q is also the name of the skill in %s", s.fmName, o.Name)
			}
		}
		if NameProblem(s.fmName) == "" {
			if fi, err := os.Lstat(filepath.Join(commands, s.fmName+".md")); err == nil && !fi.IsDir() {
				s.add(0, CheckDuplicate, "a custom command %s.md has the same name: both would be /%s", s.fmName, s.fmName)
			}
		}
	}
	sigs := make([]textsim.Sig, len(all))
	for i, s := range all {
		if s.Description != "" {
			sigs[i] = textsim.Of(s.Description)
		}
	}
	for i, s := range all {
		for j, o := range all {
			if i == j || sigs[i] == nil || sigs[j] == nil {
				continue
			}
			if sim := textsim.Jaccard(sigs[i], sigs[j]); sim >= CollisionSimilarity {
				s.add(0, CheckCollision, "the description shares %.0f%% of its words with %s's: Claude could not tell when to use which; say what sets it apart", sim*100, o.Name)
			}
		}
	}
}

// Find returns the skill named name (its folder), or nil.
func Find(all []*Skill, name string) *Skill {
	i := slices.IndexFunc(all, func(s *Skill) bool { return s.Name == name })
	if i < 0 {
		return nil
	}
	return all[i]
}
