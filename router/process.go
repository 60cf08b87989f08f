package router

import (
	"context"
	"time"
)

// ProcessResult is what RunProcess observed of one run.
type ProcessResult struct {
	Stdout    []byte // the first 1 MiB
	StdoutLen int64  // bytes written to stdout, kept or not
	Stderr    []byte // the last 64 KiB
	ExitCode  int    // -1 if it never ran or was killed
	TimedOut  bool   // the timeout expired and everything it started was killed
	Canceled  error  // ctx.Err() when the caller's ctx ended the run
	Err       error  // start or wait error (nil on success; a non-zero exit is an *exec.ExitError)
}

// Describe says in one line what went wrong with the run of command, with
// the tail of its stderr.
func (r ProcessResult) Describe(command []string, timeout time.Duration) string {
	return describe(command, r.TimedOut, timeout, false, r.ExitCode, r.Err, string(r.Stderr))
}

// RunProcess runs argv (never through a shell) in dir with env and stdin,
// the way the hub runs responders: in its own process group (a Windows job
// object), the whole group killed when the timeout expires or ctx ends,
// stdout and stderr kept bounded. A bare command name is searched on PATH;
// a name with a slash is relative to dir.
func RunProcess(ctx context.Context, argv []string, dir string, env []string, stdin []byte, timeout time.Duration) ProcessResult {
	if len(argv) == 0 || argv[0] == "" {
		return ProcessResult{ExitCode: -1, Err: errNoCommand}
	}
	res := runProcess(ctx, argv, dir, env, stdin, timeout)
	return ProcessResult{
		Stdout: res.stdout, StdoutLen: res.stdoutLen, Stderr: res.stderr, ExitCode: res.exitCode,
		TimedOut: res.timedOut, Canceled: res.canceled, Err: res.err,
	}
}

type constError string

func (e constError) Error() string { return string(e) }

const errNoCommand = constError("no command configured")
