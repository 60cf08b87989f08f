package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// cmdRepeat runs agentx in-process N times, {i} in the arguments replaced
// by 1..N, to build a workspace with a history quickly:
//
//	repeat 150 clarify ask --issue {i} --from engineer --to architect --topic 'T{i}' --question 'Q{i}?'
//
// It runs in $WORK with the script's environment, and stops at the first
// run that fails.
func cmdRepeat(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: repeat N agentx-args...")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	root := ts.Getenv("AGENTX_ROOT")
	if root == "" {
		root = ts.Getenv("WORK")
	}
	for i := 1; i <= n; i++ {
		argv := make([]string, len(args)-1)
		for j, a := range args[1:] {
			argv[j] = strings.ReplaceAll(a, "{i}", strconv.Itoa(i))
		}
		var out, errb bytes.Buffer
		a := &App{
			stdin:  strings.NewReader(""),
			stdout: &out,
			stderr: &errb,
			getenv: func(k string) string {
				if k == "AGENTX_ROOT" {
					return root
				}
				return ts.Getenv(k)
			},
		}
		if code := run(context.Background(), a, argv); code != 0 {
			ts.Fatalf("repeat %d: agentx %s: exit %d\n%s%s", i, strings.Join(argv, " "), code, out.String(), errb.String())
		}
	}
}

// cmdMaxBytes fails when a file (stdout, stderr, or a file in $WORK) is
// longer than N bytes:
//
//	maxbytes 9000 stdout
func cmdMaxBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: maxbytes N file")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	var size int
	switch args[1] {
	case "stdout", "stderr":
		size = len(ts.ReadFile(args[1]))
	default:
		fi, err := os.Stat(ts.MkAbs(args[1]))
		ts.Check(err)
		size = int(fi.Size())
	}
	if size > n {
		ts.Fatalf("%s is %d bytes, more than %d", args[1], size, n)
	}
	ts.Logf("%s is %d bytes (at most %d)", args[1], size, n)
}

// cmdEnvRepeat sets an environment variable to TEXT repeated to N bytes
// (the last copy cut to fit), for a story that needs a long argument:
//
//	envrepeat BIG 20000 'word '
func cmdEnvRepeat(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 || args[2] == "" {
		ts.Fatalf("usage: envrepeat NAME N TEXT")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	ts.Setenv(args[0], strings.Repeat(args[2], n/len(args[2])+1)[:n])
}

// cmdSetContext records, on clarification ID of issue N, the context its
// question came with: the files named (relative to $WORK, the repository)
// with their SHA-256 as they are now, and the commit 0123456789ab…, as an
// ask that gives files to its answerer records it:
//
//	setcontext 43 CLR-43-001 schema.sql
func cmdSetContext(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: setcontext ISSUE ID FILE...")
	}
	issue, err := strconv.Atoi(args[0])
	ts.Check(err)
	x := &ledger.Context{Commit: "0123456789abcdef0123456789abcdef01234567"}
	for _, f := range args[2:] {
		sum := sha256.Sum256([]byte(ts.ReadFile(f)))
		x.Refs = append(x.Refs, ledger.ContextRef{Kind: "ref", Path: f, SHA256: hex.EncodeToString(sum[:])})
	}
	store := ledger.NewStore(filepath.Join(ts.Getenv("WORK"), ".agentx", "state"), lock.Options{}, nil)
	_, err = store.Update(context.Background(), issue, func(l *ledger.Ledger) error {
		c := l.Find(args[1])
		if c == nil {
			return fmt.Errorf("%s: not found", args[1])
		}
		c.Ext().Context = x
		return nil
	})
	ts.Check(err)
}
