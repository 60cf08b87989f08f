//go:build !unix

package lock

// On this platform os.OpenFile has no O_NOFOLLOW or O_NONBLOCK; readSnapshot
// and the queue still refuse a non-regular file after opening it.
const (
	noFollow = 0
	nonBlock = 0
)
