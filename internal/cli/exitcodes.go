package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/cli/ext"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// usageError is a bad command line.
type usageError = ext.UsageError

// interruptedError is a command cut short by a signal.
type interruptedError struct{ err error }

func (e *interruptedError) Error() string { return "interrupted" }
func (e *interruptedError) Unwrap() error { return e.err }

// codedError carries an explicit exit code, for outcomes that are not
// failures of a package (a ready gate that finds the issue blocked).
type codedError = ext.Failure

// errorExit maps an error to its exit code. Order matters: the most
// specific cause wins.
func errorExit(err error) ext.ExitCode {
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
		return coded.Code
	case errors.As(err, &interrupt), errors.Is(err, context.Canceled):
		return ext.ExitInterrupted
	case errors.As(err, &noWS):
		return ext.ExitNoWorkspace
	case errors.As(err, &usage), errors.As(err, &input):
		return ext.ExitUsage
	case errors.As(err, &identity):
		return ext.ExitIdentity
	case errors.As(err, &link), errors.As(err, &lockPath):
		return ext.ExitUnsafePath
	case errors.As(err, &lost):
		return ext.ExitLockLost
	case errors.As(err, &busy):
		return ext.ExitRemoteBusy
	case errors.As(err, &superseded):
		return ext.ExitSuperseded
	case errors.As(err, &ruleErr):
		return ext.ExitRejected
	case errors.As(err, &waitErr):
		return ext.ExitWaitTimeout
	case errors.As(err, &timeout):
		return ext.ExitLockTimeout
	case errors.As(err, &transition):
		return ext.ExitTransition
	case errors.As(err, &corrupt), errors.As(err, &wfErr), errors.As(err, &wfErrs):
		return ext.ExitInvalidData
	case errors.As(err, &lookup):
		return lookupExit(lookup)
	case errors.Is(err, ledger.ErrNotFound):
		return ext.ExitNotFound
	}
	return ext.ExitFailure
}

// hintOf returns the hint an error offers, if any.
func hintOf(err error) string {
	if h := whoHint(err); h != "" {
		return h
	}
	if h := advice(err); h != "" {
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
	for _, c := range ext.ExitCodes {
		fmt.Fprintf(&b, "  %3d  %-18s %s\n", c.N, c.Name, c.Meaning)
	}
	return b.String()
}

// lookupExit: a workflow or step that does not exist is not found; an agent
// that has no step, or asks through another agent's step, is refused by the
// rules.
func lookupExit(e *workflow.LookupError) ext.ExitCode {
	if errors.Is(e, workflow.ErrUnknownWorkflow) || errors.Is(e, workflow.ErrUnknownStep) {
		return ext.ExitNotFound
	}
	return ext.ExitRejected
}
