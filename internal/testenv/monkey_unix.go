//go:build unix

package testenv

import (
	"context"
	"errors"
	"math/rand/v2"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Monkey is the chaos of the multi-process proofs: it kills (SIGKILL) or
// pauses (SIGSTOP, then SIGCONT) at random the processes a test started
// and told it of. Its methods are safe for concurrent use.
type Monkey struct {
	mu             sync.Mutex
	live           map[int]*exec.Cmd
	killed, paused int
}

// started tells m of c, started: it may now be picked.
func (m *Monkey) started(c *exec.Cmd) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live == nil {
		m.live = map[int]*exec.Cmd{}
	}
	m.live[c.Process.Pid] = c
}

// ended tells m that c was waited for: it is not picked any more.
func (m *Monkey) ended(c *exec.Cmd) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.live, c.Process.Pid)
}

// Counts are the processes killed and paused so far.
func (m *Monkey) Counts() (killed, paused int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.killed, m.paused
}

// Exec starts c, lets m pick it while it runs, and waits for its end: its
// exit code, -1 when a signal ended it (the monkey's SIGKILL). One still
// running limit on is continued and killed, and hung is true. err is a
// failure to start or to wait, not an exit status.
func (m *Monkey) Exec(c *exec.Cmd, limit time.Duration) (code int, hung bool, err error) {
	if err := c.Start(); err != nil {
		return -1, false, err
	}
	m.started(c)
	var over atomic.Bool
	t := time.AfterFunc(limit, func() {
		over.Store(true)
		_ = c.Process.Signal(syscall.SIGCONT)
		_ = c.Process.Kill()
	})
	err = c.Wait()
	t.Stop()
	m.ended(c)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, over.Load(), nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, over.Load(), nil
		}
		return ee.ExitCode(), over.Load(), nil
	}
	return -1, over.Load(), err
}

// Run picks a live process every interval until ctx ends and, at even
// odds, kills it or pauses it for pauseFor (drawn with rng); it returns
// once every process it paused has been continued.
func (m *Monkey) Run(ctx context.Context, rng *rand.Rand, every time.Duration, pauseFor func(*rand.Rand) time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var paused sync.WaitGroup
	defer paused.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		m.mu.Lock()
		var pick *exec.Cmd
		if len(m.live) > 0 {
			pids := make([]int, 0, len(m.live))
			for pid := range m.live {
				pids = append(pids, pid)
			}
			slices.Sort(pids)
			pick = m.live[pids[rng.IntN(len(pids))]]
		}
		m.mu.Unlock()
		if pick == nil {
			continue
		}
		if rng.IntN(2) == 0 {
			if pick.Process.Signal(syscall.SIGKILL) == nil {
				m.mu.Lock()
				m.killed++
				m.mu.Unlock()
			}
			continue
		}
		if pick.Process.Signal(syscall.SIGSTOP) != nil {
			continue
		}
		m.mu.Lock()
		m.paused++
		m.mu.Unlock()
		d := pauseFor(rng)
		paused.Go(func() {
			time.Sleep(d)
			_ = pick.Process.Signal(syscall.SIGCONT)
		})
	}
}
