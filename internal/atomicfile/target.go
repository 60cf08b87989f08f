package atomicfile

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Target is the file a WriteFile fill writes: from its first byte to its
// last, in order, through Write and CopyFrom.
//
// A new temp file is simply written. A shadow (see Options.Shadow) already
// holds an older version of the file, mostly the same bytes at the same
// offsets: it is patched, every stretch compared with what the file holds
// there and written only where it differs, so that the fsync writes back
// the pages that changed, not the whole file. Nothing about the shadow's
// content is trusted: a patch interrupted half-way is compared like any
// other content by the next one, unless the caller vouches for it
// (Options.ShadowHolds).
type Target struct {
	f     *os.File
	patch bool
	at    int64  // offset of buf[0]
	buf   []byte // bytes written but not yet put in the file
	cmp   []byte // patch: scratch for what the file holds
	wrote int64  // patch: bytes that differed and were written
	err   error

	// held: the shadow's first held bytes are those of heldOf, the file
	// at path when the write began (Options.ShadowHolds); forget is
	// called, once, before the patch writes below held
	held   int64
	heldOf os.FileInfo
	forget func() error
}

const (
	targetBuf = 64 << 10
	// page is the unit a patch compares and writes in, aligned to the
	// file: what the kernel marks dirty and writes back anyway.
	page = 4 << 10
)

func newTarget(f *os.File, patch bool) *Target {
	t := &Target{f: f, patch: patch, buf: make([]byte, 0, targetBuf)}
	if patch {
		t.cmp = make([]byte, targetBuf)
	}
	return t
}

// holds asks ask, if not nil, how much of the shadow being patched the
// caller vouches for.
func (t *Target) holds(path string, ask func(os.FileInfo) (int64, func() error)) {
	if !t.patch || ask == nil {
		return
	}
	fi, err := t.f.Stat()
	if err != nil {
		return
	}
	cur, err := os.Lstat(path)
	if err != nil {
		return
	}
	if n, forget := ask(fi); n > 0 && forget != nil {
		t.held, t.heldOf, t.forget = min(n, fi.Size()), cur, forget
	}
}

// Write appends p to the file.
func (t *Target) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && t.err == nil {
		if len(t.buf) == cap(t.buf) {
			t.flush()
		}
		k := copy(t.buf[len(t.buf):cap(t.buf)], p)
		t.buf, p = t.buf[:len(t.buf)+k], p[k:]
	}
	if t.err != nil {
		return 0, t.err
	}
	return n, nil
}

// CopyFrom appends n bytes of src, from offset off: in the kernel
// (copy_file_range on Linux) into a new file, compared page by page into a
// shadow.
func (t *Target) CopyFrom(src *os.File, off, n int64) error {
	if t.flush(); t.err != nil {
		return t.err
	}
	if !t.patch {
		if _, err := src.Seek(off, io.SeekStart); err != nil {
			t.err = err
			return err
		}
		got, err := t.f.ReadFrom(&io.LimitedReader{R: src, N: n})
		if err == nil && got != n {
			err = fmt.Errorf("copied %d of %d bytes from %s", got, n, src.Name())
		}
		t.at += got
		t.err = err
		return err
	}
	k := t.alreadyHeld(src, off, n)
	t.at, off, n = t.at+k, off+k, n-k
	for n > 0 && t.err == nil {
		b := t.buf[:min(n, int64(cap(t.buf)))]
		got, err := src.ReadAt(b, off)
		if got < len(b) {
			if err == nil || err == io.EOF {
				err = fmt.Errorf("copied %d of %d bytes from %s", got, len(b), src.Name())
			}
			t.err = err
			break
		}
		t.put(b)
		off, n = off+int64(got), n-int64(got)
	}
	t.buf = t.buf[:0]
	return t.err
}

// alreadyHeld is how many of the n bytes of src at off, copied to the
// same offset, the shadow holds already on the caller's word
// (Options.ShadowHolds): those of path's file below held.
func (t *Target) alreadyHeld(src *os.File, off, n int64) int64 {
	if off != t.at || off >= t.held {
		return 0
	}
	if fi, err := src.Stat(); err != nil || !os.SameFile(fi, t.heldOf) {
		return 0
	}
	return min(n, t.held-off)
}

// flush puts the buffered bytes in the file.
func (t *Target) flush() {
	if len(t.buf) == 0 || t.err != nil {
		return
	}
	if t.patch {
		t.put(t.buf)
	} else {
		var n int
		n, t.err = t.f.Write(t.buf)
		t.at += int64(n)
	}
	t.buf = t.buf[:0]
}

// put patches b in at t.at: the pages of b that differ from the file's
// bytes there are written, each run of them in one write.
func (t *Target) put(b []byte) {
	have, err := t.f.ReadAt(t.cmp[:len(b)], t.at)
	if err != nil && err != io.EOF {
		t.err = err
		return
	}
	old := t.cmp[:have]
	from := -1 // start of the run of differing pages being gathered
	for i := 0; i < len(b); {
		// compared in the file's pages: what the kernel marks dirty
		j := min(i+page-int((t.at+int64(i))%page), len(b))
		if j <= len(old) && bytes.Equal(b[i:j], old[i:j]) {
			t.write(b, from, i)
			from = -1
		} else if from < 0 {
			from = i
		}
		i = j
	}
	t.write(b, from, len(b))
	t.at += int64(len(b))
}

// write writes b[from:to] at its place, if from is not negative.
func (t *Target) write(b []byte, from, to int) {
	if from < 0 || t.err != nil {
		return
	}
	if t.err = t.spoil(t.at + int64(from)); t.err != nil {
		return
	}
	if _, err := t.f.WriteAt(b[from:to], t.at+int64(from)); err != nil {
		t.err = err
		return
	}
	t.wrote += int64(to - from)
}

// spoil calls forget before the first change to the shadow at off, when
// off is below what the caller vouched for.
func (t *Target) spoil(off int64) error {
	if off >= t.held || t.forget == nil {
		return nil
	}
	forget := t.forget
	t.forget, t.held = nil, 0
	return forget()
}

// finish puts what is buffered in the file and, for a shadow, cuts it to
// the length written.
func (t *Target) finish() error {
	if t.flush(); t.err != nil {
		return t.err
	}
	if t.patch {
		// ftruncate also sets the modification time, so a file whose
		// bytes all matched is not mistaken for the version it was
		t.err = t.f.Truncate(t.at)
	}
	return t.err
}
