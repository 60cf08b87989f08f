package ext

// ExitCode is one row of the machine contract: a number, the code name used
// in JSON errors, and what it means.
type ExitCode struct {
	N       int
	Name    string
	Meaning string
}

// The exit codes. This table, the CLI's errorExit and `agentx help exit-codes`
// are the one place they are defined.
var (
	ExitOK          = ExitCode{0, "ok", "success"}
	ExitFailure     = ExitCode{1, "failure", "any other failure"}
	ExitNoFull      = ExitCode{1, "no_full_binary", "the command needs agentx-full (the MCP server, GitHub and Slack modes, doctor, skills), which is not beside agentx, on PATH or at $AGENTX_FULL"}
	ExitUsage       = ExitCode{2, "usage", "bad command line: unknown command or flag, bad flag value or input text"}
	ExitNotFound    = ExitCode{3, "not_found", "no such clarification, issue or workflow"}
	ExitRejected    = ExitCode{4, "rejected", "refused by the workflow rules: scope, blocking not allowed, question cap, not a party"}
	ExitIdentity    = ExitCode{4, "identity_mismatch", "acting as someone else: as another agent than AGENTX_AGENT, as human from an agent or the MCP server, or as a person [humans] allow does not list"}
	ExitLockTimeout = ExitCode{5, "lock_timeout", "a state file stayed locked by another process past the wait budget"}
	ExitLockLost    = ExitCode{5, "lock_lost", "another tool took this process's lock over while it held it (it was paused past the stale age): nothing was written; run it again"}
	ExitRemoteBusy  = ExitCode{5, "remote_busy", "with a [remote]: other hosts published first every time the write was tried ([remote] attempts): nothing written; run it again"}
	ExitTransition  = ExitCode{6, "invalid_transition", "the clarification's status does not allow that move"}
	ExitSuperseded  = ExitCode{6, "superseded", "with a [remote]: another host changed the clarification first and the change no longer applies; data is the record as it now stands"}
	ExitInvalidData = ExitCode{7, "invalid_data", "a ledger, workflow or config file is invalid or corrupt (never overwritten)"}
	ExitUnsafePath  = ExitCode{7, "unsafe_path", "a file agentx would write or lock (or a directory on its way) is a symbolic link or not a regular file: refused, nothing written"}
	ExitWaitTimeout = ExitCode{8, "wait_timeout", "waited for an answer and none came: in time, or at all (escalated to a human, or abandoned)"}
	ExitBlocked     = ExitCode{9, "blocked", "ready gate: the issue has a pending or escalated clarification"}
	ExitNoWorkspace = ExitCode{10, "no_workspace", "no .agentx workspace found (run agentx init)"}
	ExitInterrupted = ExitCode{130, "interrupted", "interrupted by a signal (Ctrl-C)"}
	ExitCodes       = []ExitCode{ExitOK, ExitFailure, ExitNoFull, ExitUsage, ExitNotFound, ExitRejected, ExitIdentity, ExitLockTimeout, ExitLockLost, ExitRemoteBusy, ExitTransition, ExitSuperseded, ExitInvalidData, ExitUnsafePath, ExitWaitTimeout, ExitBlocked, ExitNoWorkspace, ExitInterrupted}
)

// Failure is a command's outcome with an explicit exit code: an outcome
// that is not a failure of a package (a ready gate that finds the issue
// blocked), or a failure worded by the command.
type Failure struct {
	Code  ExitCode
	Msg   string
	Todo  string // what to do about it: the error's hint
	Quiet bool   // the outcome is already on stdout: print no error
	Data  any    // under --json, the error document's data
}

func (e *Failure) Error() string { return e.Msg }

// Hint is what to do about it.
func (e *Failure) Hint() string { return e.Todo }
