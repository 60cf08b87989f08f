package ghmirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentx-cli/agentx/router"
)

// Open returns GitHub mode over hub h, with the token Token finds in
// getenv: nil when [github] is not configured. warn receives the
// problems that do not stop the work (Mirror.Warn).
func Open(ctx context.Context, h *router.Hub, getenv func(string) string, warn func(error)) (*Mirror, error) {
	cfg := h.Rules.Config.GitHub
	if cfg == nil {
		return nil, nil
	}
	token, _, err := Token(ctx, getenv, cfg.APIURL)
	if err != nil {
		return nil, err
	}
	// Each call is bounded by its context (Side: the [github] timeout);
	// the client's own timeout is a backstop.
	c, err := NewClient(cfg.APIURL, cfg.Repo, token, &http.Client{Timeout: cfg.Timeout.Duration})
	if err != nil {
		return nil, err
	}
	return &Mirror{Hub: h, Config: cfg, Client: c, Warn: warn}, nil
}

// Side is GitHub mode as a side effect of one piece of work on the hub:
// a command that runs the monitor (ready, clarify, hooks, monitor) or an
// MCP tool call. Before the work (Read), new comments are read, at most
// once per interval; after it (Push), what changed is mirrored. Each is
// bounded by [github] timeout. A failure goes to Warn, once per Side (a
// second failure in the same piece of work says nothing new), and the
// work stays queued: it never fails the command or the call.
//
// A Side is for one goroutine; Sides over the same Mirror may run at
// once: one of them reads or mirrors at a time, the others leave it to
// that one, as other processes do (ErrBusy).
type Side struct {
	Mirror *Mirror     // nil: GitHub mode is off, or could not be opened (Err)
	Err    error       // why the Mirror could not be opened, if so
	Warn   func(error) // receives the failures
	failed bool
}

// Read reads new comments (Mirror.Poll), at most once per interval.
func (s *Side) Read(ctx context.Context) { s.run(ctx, true) }

// Push mirrors what changed (Mirror.Push).
func (s *Side) Push(ctx context.Context) { s.run(ctx, false) }

func (s *Side) run(ctx context.Context, read bool) {
	if s == nil || s.failed {
		return // off, or it failed already in this piece of work: once is enough
	}
	m := s.Mirror
	if m == nil {
		if s.Err != nil {
			s.failed = true
			s.warn(s.Err)
		}
		return
	}
	if !m.busy.TryLock() {
		return // another goroutine of this process is at it
	}
	defer m.busy.Unlock()
	ctx, cancel := context.WithTimeout(ctx, m.Config.Timeout.Duration)
	defer cancel()
	var err error
	if read {
		_, err = m.Poll(ctx, false)
	} else {
		_, err = m.Push(ctx, false)
	}
	if err != nil && !errors.Is(err, ErrBusy) {
		s.failed = true
		s.warn(fmt.Errorf("%w (queued: agentx github status shows what is behind)", err))
	}
}

func (s *Side) warn(err error) {
	if s.Warn != nil {
		s.Warn(err)
	}
}

// Wait is hub.Wait for clarification id that, in GitHub mode, reads new
// comments (Read) every interval, at least a second apart, while it
// waits, so that an /answer on GitHub reaches the waiting asker.
func (s *Side) Wait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	return s.WaitWith(ctx, h.Wait, id, timeout)
}

// WaitWith is Wait over another way of waiting for the answer (wait: one
// that also watches a shared remote).
func (s *Side) WaitWith(ctx context.Context, wait func(ctx context.Context, id string, timeout time.Duration) (router.Record, error), id string, timeout time.Duration) (router.Record, error) {
	if s == nil || s.Mirror == nil {
		return wait(ctx, id, timeout)
	}
	start := time.Now()
	step := max(s.Mirror.Config.Interval.Duration, time.Second)
	for {
		s.Read(ctx)
		left := timeout - time.Since(start)
		rec, err := wait(ctx, id, max(min(step, left), 0))
		var te *router.WaitTimeoutError
		if !errors.As(err, &te) || time.Since(start) >= timeout {
			if te != nil {
				te.Waited = time.Since(start)
			}
			return rec, err
		}
	}
}
