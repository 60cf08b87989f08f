//go:build !unix

package wake

import "os/exec"

// detach leaves cmd as it is: it is not waited for.
func detach(*exec.Cmd) {}

// alive cannot tell here: a claim is left to its process for claimGrace.
func alive(pid int) bool { return pid > 0 }
