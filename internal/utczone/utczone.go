package utczone

import "syscall"

// set is whether init set TZ, so Restore must unset it.
var set bool

func init() {
	if _, ok := syscall.Getenv("TZ"); !ok {
		set = syscall.Setenv("TZ", "") == nil
	}
}

// Restore takes away the TZ that init set, if it set one. Call it before
// starting any other program; calling it again does nothing.
func Restore() {
	if set {
		set = false
		_ = syscall.Unsetenv("TZ")
	}
}
