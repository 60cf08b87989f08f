//go:build !linux

package wake

// ClientPID is the process of the client that ran this hook; off Linux it
// is not told (0), and a waiter ends with its own process.
func ClientPID() int { return 0 }

// zombie is not told off Linux.
func zombie(int) bool { return false }
