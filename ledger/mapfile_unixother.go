//go:build unix && !linux

package ledger

// mapPopulate: other systems map pages as they are reached.
const mapPopulate = 0
