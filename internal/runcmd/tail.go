package runcmd

import (
	"bytes"
	"unicode/utf8"
)

// Tail is an io.Writer that keeps the last Max bytes written: a command's
// output, bounded, with its end (where the error usually is) kept.
type Tail struct {
	Max int
	buf []byte
	cut bool // bytes were dropped from the front
}

// Write keeps the end of p; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	// Drop the front in large steps: a flood costs a copy per Max bytes,
	// not one per write.
	if len(t.buf) > 2*t.Max {
		// One byte more than kept: it says whether the tail starts a line.
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.Max-1:]...)
		t.cut = true
	}
	return len(p), nil
}

// Text returns what is kept, at most Max bytes, and whether earlier bytes
// were dropped. When some were, the text starts at a line's start if the
// kept bytes hold a line break, and never inside a UTF-8 character.
func (t *Tail) Text() (string, bool) {
	b, cut := t.buf, t.cut
	lineStart := false
	if len(b) > t.Max {
		lineStart = b[len(b)-t.Max-1] == '\n'
		b, cut = b[len(b)-t.Max:], true
	}
	if cut && !lineStart {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i+1 < len(b) {
			b = b[i+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return string(b), cut
}
