// Package skills is the skill lifecycle of the supervisor gate: an
// approved new_skill proposal is drafted into a skill in the format Claude
// Code loads (DIR/NAME/SKILL.md: YAML front matter with name and
// description, then Markdown instructions), skills are validated against
// that format, and listed with their origin (written by hand, or drafted
// from a proposal) and status (draft, validated, invalid).
//
// A draft is inert: its front matter sets disable-model-invocation, so
// Claude does not load it on its own, and it holds a marker line until
// someone writes its instructions. Nothing here activates a skill: a
// person does, by reviewing the file, removing the marker and that line,
// and committing it. agentx never loads skills itself.
//
// Skill files come from the repository and proposals from agents: both
// are untrusted. Files are read with a size bound, never through a
// symbolic link, and parsed without panicking on any input (the front
// matter parser is fuzzed); what is printed from them is neutralised by
// the caller. A draft is written with internal/atomicfile into a folder
// created for it, never over an existing skill nor through a link.
package skills
