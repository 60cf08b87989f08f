//go:build race

package testenv

// Race reports whether the binary was built with -race. Tests that start
// many processes scale down under it: the race detector slows each process
// several times and cannot see races between processes anyway. The full
// scale runs in CI's pass without -race.
const Race = true
