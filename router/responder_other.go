//go:build !unix && !windows

package router

import "os/exec"

// procGroup on a platform with neither process groups nor job objects is
// the child alone: kill ends it, and what it started may outlive it.
type procGroup struct{ cmd *exec.Cmd }

func newProcGroup(cmd *exec.Cmd) *procGroup { return &procGroup{cmd: cmd} }
func (g *procGroup) started()               {}
func (g *procGroup) kill() error            { return g.cmd.Process.Kill() }
func (g *procGroup) close()                 {}
