//go:build !linux

package lock

// queueDepth is unknown on this platform.
func queueDepth(string) int { return -1 }
