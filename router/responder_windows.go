//go:build windows

package router

import (
	"os/exec"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procGroup is a responder and everything it starts, killed as one: on
// Windows a job object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, which the
// child joins as soon as it has started (children it starts join with it).
// A grandchild started in the instant before the child joins escapes the
// job; if the job cannot be made, kill ends the child alone.
type procGroup struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	job windows.Handle // 0 until the child has joined
}

func newProcGroup(cmd *exec.Cmd) *procGroup { return &procGroup{cmd: cmd} }

// started puts the running child in a new job object.
func (g *procGroup) started() {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(g.cmd.Process.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return
	}
	g.mu.Lock()
	g.job = job
	g.mu.Unlock()
}

// kill terminates every process in the job, or the child alone when it has
// no job.
func (g *procGroup) kill() error {
	g.mu.Lock()
	job := g.job
	g.mu.Unlock()
	if job != 0 {
		return windows.TerminateJobObject(job, 1)
	}
	return g.cmd.Process.Kill()
}

// close releases the job; KILL_ON_JOB_CLOSE ends what is still in it.
func (g *procGroup) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job != 0 {
		_ = windows.CloseHandle(g.job)
		g.job = 0
	}
}
