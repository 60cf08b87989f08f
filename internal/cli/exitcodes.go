package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/setup"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// interruptedError is a command cut short by a signal.
type interruptedError struct{ err error }

func (e *interruptedError) Error() string { return "interrupted" }
func (e *interruptedError) Unwrap() error { return e.err }

// errorExit maps an error to its exit code. Order matters: the most
// specific cause wins.
func errorExit(err error) ExitCode {
	var (
		coded      *codedError
		usage      *usageError
		input      *ledger.InputError
		noWS       *workspace.NotFoundError
		timeout    *lock.TimeoutError
		transition *ledger.TransitionError
		corrupt    *ledger.CorruptError
		wfErr      *workflow.Error
		wfErrs     workflow.Errors
		lookup     *workflow.LookupError
		interrupt  *interruptedError
		ruleErr    *router.RuleError
		identity   *router.IdentityError
		waitErr    *router.WaitTimeoutError
		link       *atomicfile.SymlinkError
		lockPath   *lock.NotRegularError
		lost       *lock.LostError
		superseded *remote.SupersededError
		renumbered *remote.RenumberedError
		busy       *remote.BusyError
		handedLost *ledger.HandedLostError
		history    *remote.HistoryError
		badConfig  *setup.DataError
		option     *router.OptionError
	)
	switch {
	case errors.As(err, &coded):
		return coded.Code
	case errors.As(err, &interrupt), errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &noWS):
		return ExitNoWorkspace
	case errors.As(err, &usage), errors.As(err, &input), errors.As(err, &option):
		return ExitUsage
	case errors.As(err, &identity):
		return ExitIdentity
	case errors.As(err, &link), errors.As(err, &lockPath):
		return ExitUnsafePath
	case errors.As(err, &lost):
		return ExitLockLost
	case errors.As(err, &busy):
		return ExitRemoteBusy
	case errors.As(err, &handedLost):
		return ExitHandedLost
	case errors.As(err, &history):
		return ExitRemoteRefused
	case errors.As(err, &superseded), errors.As(err, &renumbered):
		return ExitSuperseded
	case errors.As(err, &ruleErr):
		return ExitRejected
	case errors.As(err, &waitErr):
		return ExitWaitTimeout
	case errors.As(err, &timeout):
		return ExitLockTimeout
	case errors.As(err, &transition):
		return ExitTransition
	case errors.As(err, &corrupt), errors.As(err, &wfErr), errors.As(err, &wfErrs), errors.As(err, &badConfig):
		return ExitInvalidData
	case errors.As(err, &lookup):
		return lookupExit(lookup)
	case errors.Is(err, ledger.ErrNotFound):
		return ExitNotFound
	}
	return ExitFailure
}

// hintOf returns the hint the command line gives for an error, if any
// (the wording table: advice.go).
func hintOf(err error) string {
	if h := whoHint(err); h != "" {
		return h
	}
	if h := advice(err); h != "" {
		return h
	}
	return cliWording().Hint(err)
}

// exitCodesHelp renders the table for `agentx help exit-codes`.
func exitCodesHelp() string {
	var b strings.Builder
	b.WriteString("agentx exits with one of these codes. Under --json, errors are printed to\n")
	b.WriteString("stderr as {\"schema_version\":1,\"error\":{\"code\":NAME,\"message\":...,\"hint\":...}}.\n\n")
	for _, c := range ExitCodes {
		fmt.Fprintf(&b, "  %3d  %-18s %s\n", c.N, c.Name, c.Meaning)
	}
	return b.String()
}

// lookupExit: a workflow or step that does not exist is not found; an agent
// that has no step, or asks through another agent's step, is refused by the
// rules.
func lookupExit(e *workflow.LookupError) ExitCode {
	if errors.Is(e, workflow.ErrUnknownWorkflow) || errors.Is(e, workflow.ErrUnknownStep) {
		return ExitNotFound
	}
	return ExitRejected
}

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
	ExitOK            = ExitCode{0, "ok", "success"}
	ExitFailure       = ExitCode{1, "failure", "any other failure"}
	ExitUsage         = ExitCode{2, "usage", "bad command line: unknown command or flag, bad flag value or input text"}
	ExitNotFound      = ExitCode{3, "not_found", "no such clarification, issue or workflow"}
	ExitRejected      = ExitCode{4, "rejected", "refused by the workflow rules: scope, blocking not allowed, question cap, not a party"}
	ExitIdentity      = ExitCode{4, "identity_mismatch", "acting as someone else: as another agent than AGENTX_AGENT, as human from an agent or the MCP server, or as a person [humans] allow does not list, or from an OS account [humans] accounts does not list"}
	ExitLockTimeout   = ExitCode{5, "lock_timeout", "a state file stayed locked by another process past the wait budget"}
	ExitLockLost      = ExitCode{5, "lock_lost", "another tool took this process's lock over while it held it (it was paused past the stale age): nothing was written; run it again"}
	ExitRemoteBusy    = ExitCode{5, "remote_busy", "with a [remote]: other hosts published first every time the write was tried ([remote] attempts): nothing written; run it again"}
	ExitHandedLost    = ExitCode{5, "handed_lost", "with a [remote]: the question or change (an answer, an assumption, a follow-up, a resolution, a cancel) was handed to another agentx process of this host holding the issue (one write for both), which was killed (or paused) before saying whether it reached the shared ledger: it is not there, and something that process left may still bring it (an intent not yet merged); look (agentx clarify list --issue N, agentx clarify show ID) before making it again"}
	ExitTransition    = ExitCode{6, "invalid_transition", "the clarification's status does not allow that move"}
	ExitSuperseded    = ExitCode{6, "superseded", "with a [remote]: another host changed the clarification first and the change no longer applies; data is the record as it now stands"}
	ExitInvalidData   = ExitCode{7, "invalid_data", "a ledger, workflow or config file is invalid or corrupt (never overwritten)"}
	ExitRemoteRefused = ExitCode{7, "remote_refused", "with a [remote]: the issue's shared ledger moved back, was deleted, or holds a commit that does not only append: refused, nothing written, the local copy kept (agentx sync --republish puts it back)"}
	ExitUnsafePath    = ExitCode{7, "unsafe_path", "a file agentx would write or lock (or a directory on its way) is a symbolic link or not a regular file: refused, nothing written"}
	ExitWaitTimeout   = ExitCode{8, "wait_timeout", "waited for an answer and none came: in time, or at all (escalated to a human, or abandoned)"}
	ExitBlocked       = ExitCode{9, "blocked", "ready gate: the issue has a blocking clarification pending, stale or escalated (a non-blocking one never gates), or work sent back"}
	ExitNoWorkspace   = ExitCode{10, "no_workspace", "no .agentx workspace found (run agentx init)"}
	ExitInterrupted   = ExitCode{130, "interrupted", "interrupted by a signal (Ctrl-C)"}
	ExitCodes         = []ExitCode{ExitOK, ExitFailure, ExitUsage, ExitRewake, ExitNotFound, ExitRejected, ExitIdentity, ExitLockTimeout, ExitLockLost, ExitRemoteBusy, ExitHandedLost, ExitTransition, ExitSuperseded, ExitInvalidData, ExitRemoteRefused, ExitUnsafePath, ExitWaitTimeout, ExitBlocked, ExitNoWorkspace, ExitInterrupted}
)

// codedError is a command's outcome with an explicit exit code: an outcome
// that is not a failure of a package (a ready gate that finds the issue
// blocked), or a failure worded by the command.
type codedError struct {
	Code  ExitCode
	Msg   string
	Todo  string // what to do about it: the error's hint
	Quiet bool   // the outcome is already on stdout: print no error
	Data  any    // under --json, the error document's data
}

func (e *codedError) Error() string { return e.Msg }

// Hint is what to do about it.
func (e *codedError) Hint() string { return e.Todo }

// usageError is a bad command line (exit 2).
type usageError struct {
	Err  error
	hint string // what to do, when more is known than "see --help"
}

func (e *usageError) Error() string { return e.Err.Error() }
func (e *usageError) Unwrap() error { return e.Err }
func (e *usageError) Hint() string {
	if e.hint != "" {
		return e.hint
	}
	return "run the command with --help to see its usage"
}

// usage is a bad command line (exit 2).
func usage(err error) error { return &usageError{Err: err} }

// classify is the CLI's error mapping, for a front end that words its own
// failures (the MCP server): exit code and code name. Its hint it words
// itself, in its own table.
func classify(err error) (int, string) {
	c := errorExit(err)
	return c.N, c.Name
}
