package setup

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// maxDiffCells bounds the work of a diff (lines before × lines after);
// past it the new content is shown whole.
const maxDiffCells = 4 << 20

// Diff is what writing f changes, as a unified diff ("" when nothing):
// a new file is all added lines.
func (f *File) Diff() string {
	if f.Status() == Unchanged {
		return ""
	}
	from := "a/" + f.Rel
	if !f.Exists {
		from = "/dev/null"
	}
	a, b := splitLines(string(f.Before)), splitLines(string(f.After))
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ b/%s\n", from, f.Rel)
	if len(a)*len(b) > maxDiffCells {
		fmt.Fprintf(&out, "@@ -1,%d +1,%d @@\n", len(a), len(b))
		for _, l := range a {
			out.WriteString("-" + l + "\n")
		}
		for _, l := range b {
			out.WriteString("+" + l + "\n")
		}
		return out.String()
	}
	ops := diffLines(a, b)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// a hunk: from diffContext lines before this change to
		// diffContext lines after the last change within reach
		start := max(i-diffContext, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*diffContext {
				break
			}
		}
		end = min(end+diffContext+1, len(ops))
		var na, nb int
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				na++
			}
			if op.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(ops[start].a, na), hunkRange(ops[start].b, nb))
		for _, op := range ops[start:end] {
			out.WriteString(string(op.kind) + op.line + "\n")
		}
		i = end
	}
	return out.String()
}

func hunkRange(at, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", at)
	}
	return fmt.Sprintf("%d,%d", at+1, n)
}

// diffOp is one line of a diff: kept (' '), removed ('-') or added ('+'),
// with the number of lines before it in each version.
type diffOp struct {
	kind byte
	line string
	a, b int
}

// diffLines is the shortest edit from a to b (by their longest common
// subsequence).
func diffLines(a, b []string) []diffOp {
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:]
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}

// splitLines splits text into lines, without their ends.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), "\n")
}
