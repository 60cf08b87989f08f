package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// exitCode is one row of the machine contract: a number, the code name used
// in JSON errors, and what it means.
type exitCode struct {
	N       int
	Name    string
	Meaning string
}

// The exit codes. This table, errorExit and `agentx help exit-codes` are
// the one place they are defined.
var (
	exitOK          = exitCode{0, "ok", "success"}
	exitFailure     = exitCode{1, "failure", "any other failure"}
	exitUsage       = exitCode{2, "usage", "bad command line: unknown command or flag, bad flag value or input text"}
	exitNotFound    = exitCode{3, "not_found", "no such clarification, issue or workflow"}
	exitRejected    = exitCode{4, "rejected", "refused by the workflow rules: scope, blocking not allowed, question cap, not a party"}
	exitIdentity    = exitCode{4, "identity_mismatch", "acting as someone else: as another agent than AGENTX_AGENT, as human from an agent or the MCP server, or as a person [humans] allow does not list"}
	exitLockTimeout = exitCode{5, "lock_timeout", "a state file stayed locked by another process past the wait budget"}
	exitLockLost    = exitCode{5, "lock_lost", "another tool took this process's lock over while it held it (it was paused past the stale age): nothing was written; run it again"}
	exitRemoteBusy  = exitCode{5, "remote_busy", "with a [remote]: other hosts published first every time the write was tried ([remote] attempts): nothing written; run it again"}
	exitTransition  = exitCode{6, "invalid_transition", "the clarification's status does not allow that move"}
	exitSuperseded  = exitCode{6, "superseded", "with a [remote]: another host changed the clarification first and the change no longer applies; data is the record as it now stands"}
	exitInvalidData = exitCode{7, "invalid_data", "a ledger, workflow or config file is invalid or corrupt (never overwritten)"}
	exitUnsafePath  = exitCode{7, "unsafe_path", "a file agentx would write or lock (or a directory on its way) is a symbolic link or not a regular file: refused, nothing written"}
	exitWaitTimeout = exitCode{8, "wait_timeout", "waited for an answer and none came: in time, or at all (escalated to a human, or abandoned)"}
	exitBlocked     = exitCode{9, "blocked", "ready gate: the issue has a pending or escalated clarification"}
	exitNoWorkspace = exitCode{10, "no_workspace", "no .agentx workspace found (run agentx init)"}
	exitInterrupted = exitCode{130, "interrupted", "interrupted by a signal (Ctrl-C)"}
	exitCodes       = []exitCode{exitOK, exitFailure, exitUsage, exitNotFound, exitRejected, exitIdentity, exitLockTimeout, exitLockLost, exitRemoteBusy, exitTransition, exitSuperseded, exitInvalidData, exitUnsafePath, exitWaitTimeout, exitBlocked, exitNoWorkspace, exitInterrupted}
)

// usageError is a bad command line.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }
func (e *usageError) Hint() string  { return "run the command with --help to see its usage" }

// interruptedError is a command cut short by a signal.
type interruptedError struct{ err error }

func (e *interruptedError) Error() string { return "interrupted" }
func (e *interruptedError) Unwrap() error { return e.err }

// codedError carries an explicit exit code, for outcomes that are not
// failures of a package (a ready gate that finds the issue blocked).
type codedError struct {
	code  exitCode
	msg   string
	hint  string
	quiet bool // the outcome is already on stdout: print no error
	data  any  // under --json, the error document's data
}

func (e *codedError) Error() string { return e.msg }
func (e *codedError) Hint() string  { return e.hint }

// errorExit maps an error to its exit code. Order matters: the most
// specific cause wins.
func errorExit(err error) exitCode {
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
		superseded *ledger.SupersededError
		busy       *ledger.BusyError
	)
	switch {
	case errors.As(err, &coded):
		return coded.code
	case errors.As(err, &interrupt), errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &noWS):
		return exitNoWorkspace
	case errors.As(err, &usage), errors.As(err, &input):
		return exitUsage
	case errors.As(err, &identity):
		return exitIdentity
	case errors.As(err, &link), errors.As(err, &lockPath):
		return exitUnsafePath
	case errors.As(err, &lost):
		return exitLockLost
	case errors.As(err, &busy):
		return exitRemoteBusy
	case errors.As(err, &superseded):
		return exitSuperseded
	case errors.As(err, &ruleErr):
		return exitRejected
	case errors.As(err, &waitErr):
		return exitWaitTimeout
	case errors.As(err, &timeout):
		return exitLockTimeout
	case errors.As(err, &transition):
		return exitTransition
	case errors.As(err, &corrupt), errors.As(err, &wfErr), errors.As(err, &wfErrs):
		return exitInvalidData
	case errors.As(err, &lookup):
		return lookupExit(lookup)
	case errors.Is(err, ledger.ErrNotFound):
		return exitNotFound
	}
	return exitFailure
}

// hintOf returns the hint an error offers, if any.
func hintOf(err error) string {
	if h := whoHint(err); h != "" {
		return h
	}
	var h interface{ Hint() string }
	for e := err; e != nil; e = errors.Unwrap(e) {
		if errors.As(e, &h) && h.Hint() != "" {
			return h.Hint()
		}
	}
	return ""
}

// exitCodesHelp renders the table for `agentx help exit-codes`.
func exitCodesHelp() string {
	var b strings.Builder
	b.WriteString("agentx exits with one of these codes. Under --json, errors are printed to\n")
	b.WriteString("stderr as {\"schema_version\":1,\"error\":{\"code\":NAME,\"message\":...,\"hint\":...}}.\n\n")
	for _, c := range exitCodes {
		fmt.Fprintf(&b, "  %3d  %-18s %s\n", c.N, c.Name, c.Meaning)
	}
	return b.String()
}

// lookupExit: a workflow or step that does not exist is not found; an agent
// that has no step, or asks through another agent's step, is refused by the
// rules.
func lookupExit(e *workflow.LookupError) exitCode {
	if errors.Is(e, workflow.ErrUnknownWorkflow) || errors.Is(e, workflow.ErrUnknownStep) {
		return exitNotFound
	}
	return exitRejected
}
