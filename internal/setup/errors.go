package setup

import (
	"bytes"
	"fmt"
)

// DataError is a file the merge cannot read as what it should hold:
// invalid JSON or TOML, or a value of the wrong kind where agentx's entry
// goes. The file is left as it is.
type DataError struct {
	Path      string // the file; "" until Plan names it
	Line, Col int    // from 1; 0 when unknown
	Msg       string
}

func (e *DataError) Error() string {
	where := e.Path
	if where == "" {
		where = "input"
	}
	if e.Line > 0 {
		where += fmt.Sprintf(":%d", e.Line)
		if e.Col > 0 {
			where += fmt.Sprintf(":%d", e.Col)
		}
	}
	return fmt.Sprintf("%s: %s (not changed)", where, e.Msg)
}

// Hint says what to do, in no front end's words (the command line names
// its setup command).
func (e *DataError) Hint() string {
	return "fix the file (or move it aside) and run the set-up again; nothing was written"
}

// MergeError is a file that parses but whose agentx entry is written in a
// form the merge does not edit (an inline table, dotted keys): nothing is
// written, and the entry is for a person to move or remove.
type MergeError struct {
	Path string
	Msg  string
	Want string // the entry agentx would write
}

func (e *MergeError) Error() string {
	return fmt.Sprintf("%s: %s (not changed)", e.Path, e.Msg)
}

// Hint says what to do.
func (e *MergeError) Hint() string {
	return "remove agentx's entry from the file, or write it by hand as:\n" + e.Want
}

// lineCol turns a byte offset in data into a line and a column (bytes),
// both from 1.
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}
