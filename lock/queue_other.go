//go:build !linux

package lock

// queueOf is unknown on this platform.
func queueOf(string) (waiting, ahead int) { return -1, -1 }
