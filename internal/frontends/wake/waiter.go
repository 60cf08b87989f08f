package wake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// Waiter is a live waiter for one session of an agent: agentx hook rewake,
// which the client (Claude Code's asyncRewake Stop hook) runs in the
// background when a turn ends and which sleeps until something for the
// agent lands, then wakes that same session in place. While it is live,
// nothing else wakes the session: no resume command starts a second
// process on a session that is open in someone's terminal.
type Waiter struct {
	PID   int         `json:"pid"`             // the waiting agentx process
	Owner int         `json:"owner,omitempty"` // the client's process: when it is gone the session was closed
	At    ledger.Time `json:"at"`
}

// live reports whether w still waits: its process and its session's
// client both run.
func (w Waiter) live() bool { return alive(w.PID) && (w.Owner <= 0 || alive(w.Owner)) }

// Alive reports whether process pid runs on this machine (off Unix: any
// pid is taken to).
func Alive(pid int) bool { return alive(pid) }

// maxWaiters bounds the waiter records kept per agent (one per session).
const maxWaiters = 64

// Waiting records this process as the live waiter of agent's session
// (replacing the one before, which then ends: see Look), for a session
// whose client is process owner (0: unknown).
// release removes the record, if it is still this process's.
func Waiting(ctx context.Context, store *ledger.Store, agent, session string, owner int) (release func(), err error) {
	if err := ledger.ValidateAgent("agent", agent); err != nil {
		return func() {}, err
	}
	if err := ValidSession(session); err != nil {
		return func() {}, err
	}
	var st State
	err = store.UpdateState(ctx, StateFile(agent), &st, func() error {
		if st.Waiters == nil {
			st.Waiters = map[string]Waiter{}
		}
		for id, w := range st.Waiters {
			if !w.live() {
				delete(st.Waiters, id) // a session closed, or a waiter killed
			}
		}
		if len(st.Waiters) >= maxWaiters {
			return errors.New("too many live waiters for " + agent)
		}
		st.Waiters[session] = Waiter{PID: os.Getpid(), Owner: owner, At: ledger.T(store.Now())}
		return nil
	})
	if err != nil {
		return func() {}, err
	}
	return releaser(ctx, store, agent, func(st *State) bool {
		if w, ok := st.Waiters[session]; ok && w.PID == os.Getpid() {
			delete(st.Waiters, session)
			return true
		}
		return false
	}), nil
}

// WaitState is what a waiter needs to know on each look: whether it is
// still its session's waiter, and whether a held turn delivers for now.
type WaitState struct {
	Mine bool // this process is still the session's waiter
	Held bool // a hook holds one of the agent's turns on the issue: it delivers
}

// Look reads agent's wake state for the waiter of session on issue (nil:
// any): an unlocked read.
func Look(store *ledger.Store, agent, session string, issue *int) (WaitState, error) {
	var st State
	if err := store.ReadState(StateFile(agent), &st); err != nil {
		return WaitState{}, err
	}
	w, ok := st.Waiters[session]
	ws := WaitState{Mine: ok && w.PID == os.Getpid()}
	now := store.Now()
	for k := range st.Holds {
		if (issue == nil || k == issueKey(issue) || k == anyIssue) && st.held(k, now) {
			ws.Held = true
			break
		}
	}
	return ws, nil
}

// held reports whether a hook holds the turn on issue key k now.
func (st *State) held(k string, now time.Time) bool {
	h, ok := st.Holds[k]
	return ok && h.Until.After(now) && alive(h.PID)
}

// deliverer reports whether something other than a resume command
// delivers to agent on issue n now: a hook holding its turn there (or on
// every issue), or a live waiter of the session a resume would start.
func (st *State) deliverer(n int, now time.Time) bool {
	if st.held(strconv.Itoa(n), now) || st.held(anyIssue, now) {
		return true
	}
	s, ok := sessionOf(*st, n)
	if !ok {
		return false
	}
	w, ok := st.Waiters[s.ID]
	return ok && w.live()
}

// maxSession bounds a session id: the clients' ids are UUIDs (36 bytes).
const maxSession = 128

// ValidSession checks a session id before it is recorded or put into a
// resume command: letters, digits, '.', '_' and '-', at most maxSession
// bytes, never a leading '-' (it would become an option of the command).
func ValidSession(id string) error {
	ok := id != "" && len(id) <= maxSession && id[0] != '-' && id[0] != '.'
	for _, r := range id {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}
	if !ok {
		return fmt.Errorf("session id %q: want 1 to %d letters, digits, '.', '_' or '-', not starting with '-' or '.'", clip(id), maxSession)
	}
	return nil
}

// clip shortens a bad id for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
