package doctor

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
)

// maxGitignore is the largest state/.gitignore doctor reads: agentx writes
// a few hundred bytes, and a file far larger is not one to append to.
const maxGitignore = 1 << 20

// checkGitignore checks that the state directory's .gitignore has every
// pattern of opts.Gitignore (what agentx init writes) as a line of its own.
// A workspace made by an earlier version lacks the patterns added since,
// and a lock's or a temp file's leftover could then be committed. --fix
// appends the missing lines after what is there, which it keeps as it is.
func checkGitignore(store *ledger.Store, opts Options, r *Report) {
	if opts.Gitignore == "" {
		return
	}
	path := filepath.Join(store.Dir(), ".gitignore")
	if f, ok := notRegular(CheckGitignore, path); ok {
		r.add(f)
		return
	}
	have, err := atomicfile.ReadAtMost(path, maxGitignore)
	absent := errors.Is(err, fs.ErrNotExist)
	switch {
	case absent:
	case errors.Is(err, atomicfile.ErrTooLarge):
		r.add(Finding{Check: CheckGitignore, Severity: Warning, Path: path, Problem: fmt.Sprintf("is larger than %d bytes: not a file agentx wrote", maxGitignore), Action: "check the file by hand"})
		return
	case err != nil:
		r.add(Finding{Check: CheckGitignore, Severity: Warning, Path: path, Problem: err.Error(), Action: "check the file by hand"})
		return
	}
	missing := missingLines(have, opts.Gitignore)
	if len(missing) == 0 {
		return
	}
	f := Finding{Check: CheckGitignore, Severity: Warning, Path: path,
		Problem: fmt.Sprintf("lacks %s: a lock or temp file a killed process left, or a per-machine cache, could be committed", strings.Join(missing, " ")),
		Action:  "agentx doctor --fix appends the missing lines (what is there stays)"}
	out := []byte(opts.Gitignore)
	if absent {
		f.Problem = "is missing: lock files, temp files and per-machine caches could be committed"
		f.Action = "agentx doctor --fix writes it"
	} else {
		out = append([]byte(nil), have...)
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		out = append(out, "# added by agentx doctor --fix\n"+strings.Join(missing, "\n")+"\n"...)
	}
	if opts.Fix {
		// Write refuses a link at path; the file is directly in the state
		// directory, so there is no directory between to check.
		err := atomicfile.Write(path, out, 0o644)
		if err != nil {
			f.Action = "could not write it: " + err.Error()
		} else {
			f.Fixed, f.Action = true, "written"
		}
	}
	r.add(f)
}

// missingLines returns the patterns of want (its lines that are neither
// blank nor comments) that have no line of their own in have.
func missingLines(have []byte, want string) []string {
	present := map[string]bool{}
	for line := range strings.SplitSeq(string(have), "\n") {
		present[strings.TrimSpace(line)] = true
	}
	var missing []string
	for line := range strings.SplitSeq(want, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && !present[line] {
			missing = append(missing, line)
		}
	}
	return missing
}
