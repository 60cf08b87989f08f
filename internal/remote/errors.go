package remote

import (
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
)

// BusyError is a write the remote refused every time it was tried: other
// hosts kept publishing first. Nothing was written; run it again.
type BusyError struct {
	Remote   string
	Attempts int
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s: other hosts published first %s in a row: nothing written", e.Remote, words.Count(e.Attempts, "time", "times"))
}

// Hint says what to do.
func (e *BusyError) Hint() string {
	return "run it again; [remote] attempts in .agentx/config.toml tries more times"
}

// SupersededError is a change that applied to the ledger its caller had
// seen but no longer applies to the shared one: another host changed the
// same clarification first. Winner is the shared ledger as it now is (also
// the local copy from now on); Changed the clarifications that differ.
type SupersededError struct {
	Issue   int
	Changed []string
	Winner  *ledger.Ledger
	Err     error // why the change no longer applies
}

func (e *SupersededError) Error() string {
	var now []string
	for _, id := range e.Changed {
		if c := e.Current(id); c != nil {
			s := fmt.Sprintf("%s is %s", id, c.Status)
			if n := len(c.Thread); n > 0 {
				s += fmt.Sprintf(", last %s by %s", c.Thread[n-1].Type, c.Thread[n-1].From)
			}
			now = append(now, s)
		}
	}
	return fmt.Sprintf("superseded: another host changed %s first (%s): %v", strings.Join(e.Changed, ", "), strings.Join(now, "; "), e.Err)
}

// Hint says where to read what the other host did.
func (e *SupersededError) Hint() string {
	if len(e.Changed) == 0 {
		return ""
	}
	return fmt.Sprintf("the local copy is now the shared one: show %s to read what the other host did", e.Changed[0])
}

// Current returns clarification id as the winner left it (nil: none).
func (e *SupersededError) Current(id string) *ledger.Clarification {
	if e.Winner == nil {
		return nil
	}
	for _, c := range e.Winner.Clarifications {
		if c.ID == id {
			if raw := c.SealedJSON(); raw != nil {
				if whole, err := ledger.DecodeRecord(raw); err == nil {
					return whole
				}
			}
			return c
		}
	}
	return nil
}

func (e *SupersededError) Unwrap() error { return e.Err }

// RenumberedError is an id this host printed for a question while the
// remote was out of reach, used after that question was delivered under
// another id (As) because another host had taken it: on this host the id
// still means this host's question, so it is refused rather than resolved
// to the other host's. Now is the question as it stands under As (nil
// when the local copy cannot say).
type RenumberedError struct {
	Issue int
	ID    string
	As    string
	Now   *ledger.Clarification
}

func (e *RenumberedError) Error() string {
	return fmt.Sprintf("superseded: %s was this host's provisional id for a question asked while the remote was out of reach; another host had taken %s, so that question is now %s", e.ID, e.ID, e.As)
}

// Hint says which id to use, in no front end's words (each names how its
// user reads the issue's questions).
func (e *RenumberedError) Hint() string {
	return fmt.Sprintf("use %s; %s on this host stays refused, as it is another host's question (issue #%d lists it)", e.As, e.ID, e.Issue)
}
