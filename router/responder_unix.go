//go:build unix

package router

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// procGroup is a responder and everything it starts, killed as one: on
// Unix a process group the child leads (Setpgid), killed with SIGKILL.
type procGroup struct{ cmd *exec.Cmd }

// newProcGroup arranges, before cmd starts, for it to lead a new group.
func newProcGroup(cmd *exec.Cmd) *procGroup {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &procGroup{cmd: cmd}
}

// started is called once cmd has started; a process group needs nothing more.
func (g *procGroup) started() {}

// kill sends SIGKILL to the whole group. A group that is already gone is
// os.ErrProcessDone.
func (g *procGroup) kill() error {
	err := syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// close releases the group; a process group holds nothing.
func (g *procGroup) close() {}
