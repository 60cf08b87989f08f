//go:build !unix

package cli

// detachTerminal does nothing where there is no /dev/tty to detach from.
func detachTerminal() {}
