package holder

import (
	"bytes"
	"testing"
)

// After a burst the pages past the resident part are handed back (they
// read as zeros), the resident part is kept, and a quiet stream makes no
// call at all.
func TestFrameBufferRelease(t *testing.T) {
	fb := newFrameBuffer()
	defer fb.close()
	if !fb.m.Mapped {
		t.Skip("no anonymous mapping here")
	}
	for i := range fb.b {
		fb.b[i] = 'x'
	}
	fb.used(len(fb.b))
	fb.release()
	if !bytes.Equal(fb.b[:fb.keep], bytes.Repeat([]byte("x"), fb.keep)) {
		t.Fatal("the resident part changed")
	}
	if !bytes.Equal(fb.b[fb.keep:], make([]byte, len(fb.b)-fb.keep)) {
		t.Fatal("the pages past the resident part were not handed back")
	}
	fb.b[fb.keep] = 'y'
	fb.used(fb.keep) // a small frame: nothing to hand back
	fb.release()
	if fb.b[fb.keep] != 'y' {
		t.Fatal("released after a frame that did not go past the resident part")
	}
}
