//go:build !unix

package brief

const nonBlock = 0
