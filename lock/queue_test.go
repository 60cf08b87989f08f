package lock

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseQueue(t *testing.T) {
	const locks = `1: FLOCK  ADVISORY  WRITE 100 08:01:4242 0 EOF
1: -> FLOCK  ADVISORY  WRITE 101 08:01:4242 0 EOF
1: -> FLOCK  ADVISORY  WRITE 102 08:01:4242 0 EOF
1: -> FLOCK  ADVISORY  WRITE 103 08:01:4242 0 EOF
2: POSIX  ADVISORY  WRITE 200 08:01:999 0 EOF
2: -> FLOCK  ADVISORY  WRITE 104 08:01:14242 0 EOF
3: -> FLOCK  ADVISORY  WRITE 105 08:01:4242 0 EOF
`
	tests := []struct {
		name          string
		pid           int
		waiting, want int
	}{
		{"third in line", 103, 3, 2},
		{"first in line", 101, 3, 0},
		{"last, under another entry", 105, 3, 3},
		{"not waiting (the holder)", 100, 4, -1},
		{"another inode's waiter is not counted", 104, 4, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waiting, ahead := parseQueue([]byte(locks), 4242, tt.pid)
			assert.Equal(t, tt.waiting, waiting)
			assert.Equal(t, tt.want, ahead)
		})
	}
	w, a := parseQueue(nil, 4242, 1)
	assert.Equal(t, 0, w)
	assert.Equal(t, -1, a)
}
