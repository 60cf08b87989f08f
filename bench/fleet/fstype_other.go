//go:build unix && !linux

package main

// fsType is not known here.
func fsType(string) string { return "" }
