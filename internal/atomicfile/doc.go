// Package atomicfile writes files so that a reader sees either the old
// content or the new, never a partial file, and the new content survives a
// crash once Write returns.
package atomicfile
