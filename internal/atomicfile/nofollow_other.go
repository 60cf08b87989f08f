//go:build !unix

package atomicfile

// noFollow is 0 where the system has no O_NOFOLLOW: OpenFile checks with
// Lstat first instead.
const noFollow = 0
