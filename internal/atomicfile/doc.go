// Package atomicfile writes files so that a reader sees either the old
// content or the new, never a partial file, and the new content survives a
// crash once Write returns. It never writes through a symbolic link, nor
// replaces one: a link where agentx keeps a file is refused with a
// *SymlinkError naming it.
package atomicfile
