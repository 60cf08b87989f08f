package brief

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
)

// Limits on what an asker may name.
const (
	MaxRefs    = 20        // files or ranges one question may name
	MaxPathLen = 1024      // bytes of one path
	maxLineNo  = 1_000_000 // the highest line number a range may name
)

// Ref is a file, or some of its lines, that an asker gives with a question:
// PATH, or PATH:LINES with LINES a line (12) or a range (12-40), counted
// from 1. Path is as given: relative to the repository root (or absolute,
// inside it).
type Ref struct {
	Path     string
	From, To int // the lines named; 0, 0: the whole file
}

// Whole reports whether r names the whole file.
func (r Ref) Whole() bool { return r.From == 0 }

// String is r as written: PATH or PATH:LINES.
func (r Ref) String() string {
	if r.Whole() {
		return r.Path
	}
	return r.Path + ":" + lines(r.From, r.To)
}

// lines writes a range as the ledger records it: "12" or "12-40".
func lines(from, to int) string {
	if from == to {
		return strconv.Itoa(from)
	}
	return strconv.Itoa(from) + "-" + strconv.Itoa(to)
}

// ParseLines reads a range as the ledger records it ("12" or "12-40").
func ParseLines(s string) (from, to int, ok bool) {
	a, b, dash := strings.Cut(s, "-")
	from, ok = lineNo(a)
	if !ok {
		return 0, 0, false
	}
	to = from
	if dash {
		if to, ok = lineNo(b); !ok {
			return 0, 0, false
		}
	}
	return from, to, from <= to
}

// lineNo reads a line number: 1 to maxLineNo, digits only.
func lineNo(s string) (int, bool) {
	if s == "" || len(s) > 7 || strings.TrimLeft(s, "0123456789") != "" || s[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= maxLineNo
}

// ParseRef reads one reference, PATH or PATH:LINES (LINES: 12 or 12-40).
// What follows the last colon must be lines: a path with a colon in it is
// named with its lines (notes:a.md:1-20). A bad reference is a
// *ledger.InputError whose Field is field (the flag or argument that gave
// it: --ref, refs).
func ParseRef(field, s string) (Ref, error) {
	bad := func(msg string) error {
		return &ledger.InputError{Field: field, Value: s, Msg: msg,
			Advice: "give PATH or PATH:LINES, relative to the repository root, with LINES a line or a range: docs/adr/ADR-42.md:10-20"}
	}
	switch {
	case s == "":
		return Ref{}, bad("is empty")
	case len(s) > MaxPathLen+16:
		return Ref{}, bad(fmt.Sprintf("is longer than %d bytes", MaxPathLen))
	case !utf8.ValidString(s) || safetext.Index(s, false) >= 0:
		return Ref{}, bad("holds control characters or invalid UTF-8")
	}
	r := Ref{Path: s}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		spec := s[i+1:]
		if spec == "" {
			return Ref{}, bad("ends with ':' and no lines")
		}
		from, to, ok := ParseLines(spec)
		if !ok {
			return Ref{}, bad(fmt.Sprintf("has lines %q: give a line (12) or a range (12-40), from 1 to %d, the first not after the last", spec, maxLineNo))
		}
		r = Ref{Path: s[:i], From: from, To: to}
	}
	switch {
	case r.Path == "":
		return Ref{}, bad("names no file")
	case len(r.Path) > MaxPathLen:
		return Ref{}, bad(fmt.Sprintf("is longer than %d bytes", MaxPathLen))
	}
	return r, nil
}

// ParseRefs reads every reference given (see ParseRef), at most MaxRefs.
func ParseRefs(field string, ss []string) ([]Ref, error) {
	if len(ss) > MaxRefs {
		return nil, &ledger.InputError{Field: field, Value: ss[MaxRefs], Msg: fmt.Sprintf("is past the limit: a question names at most %d files (%d given)", MaxRefs, len(ss))}
	}
	out := make([]Ref, 0, len(ss))
	for _, s := range ss {
		r, err := ParseRef(field, s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
