package wire

import (
	"encoding/binary"
	"unicode/utf8"
)

// The input lane (version 9; docs/architecture.md, Lanes):
// while an output lane runs, the holder may also read the lane's terminal
// and write plain typing to the pty itself, so that a key reaches the
// program without waking the viewer or the server. The server grants it;
// anything but plain typing goes back, through the server, to the viewer,
// which takes it as typed.
//
//   - TypeLaneIn, server → viewer, no payload: a lane runs; the viewer may
//     stop reading its terminal and answer with TypeLaneIn.
//   - TypeLaneIn, viewer → server, no payload: the viewer reads its terminal
//     no more until the lane ends; the holder may. Sent after a server's
//     TypeLaneIn, and after each TypeLaneInput it has taken as typed.
//   - TypeLaneRead, server → holder: pid uint32, the viewer's process:
//     read the open lane's terminal while that process lives, is not
//     stopped and leads its terminal's foreground, until the lane ends or
//     a hand-back.
//   - TypeLaneInput, holder → server → viewer: bytes the holder read from
//     the lane's terminal and did not write to the pty (anything not
//     PlainTyping); the holder reads no more until the next TypeLaneRead.
//   - TypeLaneTyped, holder → server: count uint64 of bytes the lane wrote
//     to the pty since the last one: the lane's viewer typed them.
const (
	TypeLaneRead  Type = 0x0f
	TypeLaneIn    Type = 0x10
	TypeLaneInput Type = 0x51
	TypeLaneTyped Type = 0x52
)

// MaxPlainTyping is the most bytes one read may hold and still be typing
// the holder writes itself: more is a paste, which the server's input
// limits and the viewer's own path take.
const MaxPlainTyping = 64

// InputLanes reports whether a peer of version speaks the input lane.
func InputLanes(version int) bool { return version >= 9 }

// LaneRead writes a lane-read frame for the process pid.
func (w *Writer) LaneRead(pid uint32) error {
	b := w.begin(TypeLaneRead, 4)
	b = binary.BigEndian.AppendUint32(b, pid)
	return w.flush(b)
}

// ParseLaneRead decodes a lane-read payload.
func ParseLaneRead(p []byte) (uint32, error) {
	if len(p) != 4 {
		return 0, short(TypeLaneRead, p, 4)
	}
	return binary.BigEndian.Uint32(p), nil
}

// PlainTyping reports whether p, read from a terminal at once, is plain
// typing: at most MaxPlainTyping bytes of printable text (valid UTF-8,
// no C1 control), Enter, Tab, Backspace or Delete. Nothing in it can be
// a terminal's answer to a question (those begin with ESC or a C1
// control), a detach key (attach's is another control key) or a paste.
func PlainTyping(p []byte) bool {
	if len(p) == 0 || len(p) > MaxPlainTyping {
		return false
	}
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\r' && c != '\t' && c != '\b' {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError || r < 0xa0 {
			return false // invalid, or a C1 control (U+0080..U+009F)
		}
		i += n
	}
	return true
}
