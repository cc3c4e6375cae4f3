// Package outerterm keeps the terminal that `termkeep attach` draws on in
// order. A session's program switches that terminal's modes (the alternate
// screen, application cursor keys, mouse reporting, a hidden cursor…), and a
// terminal's earlier modes cannot be asked for, so a detach, an exit or a
// lost connection puts back every mode the session switched away from a
// terminal's defaults (modes.go), and nothing else: a reset the session
// never needed could move the cursor or clear what the user's shell set.
// attach's notices go in the terminal's title, where output never is: a
// notice neither lands inside a line of output nor erases one when it goes.
//
// Every byte attach writes to the terminal passes through one Term:
// snapshots (Snapshot), live output (Output) and attach's own lines.
// A Term is used by one goroutine at a time; it does no I/O.
package outerterm

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"termkeep/internal/predict"
	"termkeep/internal/screen"
	"termkeep/internal/vtscan"
)

// Reset, before a snapshot is drawn, returns a terminal to its defaults
// without clearing it (the snapshot then sets the session's): normal
// cursor keys and keypad, every mouse mode, bracketed paste, focus events
// and synchronized output off, insert and origin mode off, autowrap on,
// the cursor visible in its default shape, the full scroll region (set
// between a save and a restore of the cursor, which it would move), SGR 0,
// ASCII in G0 and G0 in use, the kitty keyboard protocol's stack popped and
// xterm's modifyOtherKeys back to its default.
const Reset = "\x1b[?1l\x1b>\x1b[?66l" +
	"\x1b[?9l\x1b[?1000l\x1b[?1001l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l" +
	"\x1b[?2004l\x1b[?1004l\x1b[?2026l" +
	"\x1b[4l\x1b[?6l\x1b[?7h" +
	"\x1b[?25h\x1b[0 q" +
	"\x1b7\x1b[r\x1b8" +
	"\x1b[m\x1b(B\x0f" +
	"\x1b[<99u\x1b[>4m"

// Title save and restore (XTWINOPS): terminals without a title stack
// ignore them.
const (
	pushTitle = "\x1b[22;0t"
	popTitle  = "\x1b[23;0t"
)

// Term is the attach's view of its terminal.
type Term struct {
	altScreen  bool // attach keeps the session in the terminal's alternate screen (--alt-screen)
	cols, rows int

	sc  vtscan.Scanner
	alt int    // the private mode that put the session in the alternate screen (47, 1047, 1049), or 0
	seq []byte // --alt-screen: the bytes of a sequence begun in an earlier chunk, held back
	// flushed: the sequence in progress was let through in part, so it
	// cannot be kept from the terminal any more.
	flushed bool
	drew    bool // a snapshot has been drawn
	// Redraw is set when the session left its alternate screen under
	// --alt-screen: the switch was kept from the terminal, whose screen
	// now needs the session's normal screen drawn again (a new snapshot).
	Redraw bool
	note   bool // a notice is in the title
	// The session's title as it last set it (OSC 0 or 2), when known in
	// full; titleSet: it set one while a notice was shown.
	title              []byte
	titleKnown, titled bool
	m                  modes // what the terminal was switched to (modes.go)
	// noClip keeps clipboard writes (OSC 52) from the terminal (a
	// read-only attach); drop: the sequence in progress is one.
	noClip, drop bool

	// The session's size and screen (size.go): the terminal is drawn
	// from model while the session's size is not the terminal's.
	model        *screen.Screen
	scols, srows int
	dirty        bool // the model changed since the last paint
	fed          bool // the model follows the output (from a snapshot on)

	// Predictive echo (predict.go): track feeds the model whatever the
	// sizes; drawn are the predicted cells on the terminal, moved says
	// the cursor is where a prediction put it; look is the predictor's
	// view of the model.
	track bool
	drawn []predict.Cell
	moved bool
	look  modelScreen
}

// New returns the Term of a terminal of cols×rows. altScreen keeps the
// session in the terminal's alternate screen, so that the screen from
// before the attach comes back intact on detach (tmux's way); otherwise
// the session draws on the normal screen and its history goes into the
// terminal's own scrollback.
func New(cols, rows int, altScreen bool) *Term {
	return &Term{cols: max(cols, 1), rows: max(rows, 1), altScreen: altScreen}
}

// DropClipboard keeps the session's clipboard writes (OSC 52) from the
// terminal, which would apply them: for a read-only attach, which may
// change nothing of its user's.
func (t *Term) DropClipboard() { t.noClip = true }

// Begin is what attach writes before anything of the session's.
func (t *Term) Begin() []byte {
	if t.altScreen {
		return []byte(pushTitle + "\x1b[?1049h\x1b[H\x1b[2J")
	}
	return []byte(pushTitle)
}

// Snapshot returns snapshot data (which starts with ESC c) as it should
// reach the terminal: the reset that would clear the terminal's scrollback
// replaced by Reset and, for the first snapshot on the normal screen, the
// screen from before the attach scrolled into the scrollback rather than
// erased.
//
// Snapshot data that does not begin with ESC c continues the snapshot
// before it (a long one spans frames) and is treated as output. While the
// session's size is not the terminal's (size.go), the snapshot is drawn
// from the model.
func (t *Term) Snapshot(p []byte) []byte {
	if t.drew && !isSnapshotStart(p) {
		return t.Output(p)
	}
	// The model follows the output from a snapshot on, while the sizes
	// differ (size.go).
	t.fed = t.model != nil && (t.track || t.scols != t.cols || t.srows != t.rows)
	t.feed(p)
	return t.drawSnapshot(p)
}

// drawSnapshot draws snapshot data p, which the model has been fed or
// was made from.
func (t *Term) drawSnapshot(p []byte) []byte {
	first := !t.drew
	t.drew, t.Redraw = true, false
	t.alt, t.seq, t.flushed, t.sc = 0, t.seq[:0], false, vtscan.Scanner{}
	t.m = modes{} // Reset, below
	rest, _ := bytes.CutPrefix(p, []byte("\x1bc"))
	var b []byte
	switch {
	case first && !t.altScreen:
		b = append(b, Reset...)
		b = append(b, "\x1b["...)
		b = strconv.AppendInt(b, int64(t.rows), 10)
		b = append(b, ";1H"...)
		b = append(b, bytes.Repeat([]byte{'\n'}, t.rows)...)
		b = append(b, "\x1b[H"...)
	default:
		b = append(b, Reset...)
		b = append(b, "\x1b[H\x1b[2J"...)
	}
	if t.rendered() {
		t.dirty = true
		return append(b, t.Paint()...)
	}
	return append(b, t.pass(rest)...)
}

// Output returns live output as it should reach the terminal, and follows
// the modes it sets. It is p itself unless --alt-screen keeps a switch back
// to the normal screen from the terminal (or holds back a sequence that p
// ends inside, to decide with the next chunk).
func (t *Term) Output(p []byte) []byte {
	t.feed(p)
	if t.rendered() {
		return nil // drawn by the next Paint
	}
	return t.pass(p)
}

// pass returns p as it should reach a terminal of the session's size.
func (t *Term) pass(p []byte) []byte {
	if !t.altScreen && !t.noClip {
		t.scan(p, nil)
		return p
	}
	if len(t.seq) == 0 && t.sc.Ground() && bytes.IndexByte(p, 0x1b) < 0 {
		return p
	}
	return t.scan(p, make([]byte, 0, len(p)+len(t.seq)))
}

// scan steps through p, following the modes. Filtering (--alt-screen), it
// appends p to out without the switches to the normal screen, and returns
// out.
func (t *Term) scan(p []byte, out []byte) []byte {
	filter := t.altScreen || t.noClip
	start := 0 // in p: where the sequence in progress began
	for i := 0; i < len(p); {
		if t.sc.Ground() {
			j := bytes.IndexByte(p[i:], 0x1b)
			if j < 0 {
				j = len(p) - i
			}
			if filter {
				out = append(out, p[i:i+j]...)
			}
			i += j
			start = i
			if i == len(p) {
				break
			}
		}
		k := t.sc.Step(p[i])
		i++
		switch k {
		case vtscan.CSI, vtscan.Esc:
			t.m.seq(&t.sc, k)
		case vtscan.OSC:
			t.osc(t.sc.Payload())
		}
		if t.noClip && t.sc.InOSC() && clipboard(t.sc.Payload()) {
			t.drop = true // however it ends (BEL, ST, or cancelled)
		}
		if !t.sc.Ground() {
			continue
		}
		keep := true
		if k == vtscan.CSI && t.sc.Prefix() == '?' && (t.sc.Final == 'h' || t.sc.Final == 'l') {
			keep = t.mode(t.sc.Final == 'h')
		}
		if t.drop {
			keep, t.drop = false, false
		}
		if filter && (keep || t.flushed) {
			out = append(out, t.seq...)
			out = append(out, p[start:i]...)
		}
		t.seq, t.flushed = t.seq[:0], false
		start = i
	}
	if filter && !t.sc.Ground() {
		// Only a CSI can be a switch: hold back one that p ends inside (a
		// short one; real switches are), and an OSC that may yet be a
		// clipboard write, and let anything else through.
		switch held := len(t.seq) + len(p) - start; {
		case t.drop:
			t.seq, t.flushed = t.seq[:0], false
		case t.sc.MayBeCSI() && held <= maxHeld,
			t.noClip && t.sc.InOSC() && strings.HasPrefix("52;", string(t.sc.Payload())):
			t.seq = append(t.seq, p[start:]...)
		default:
			out = append(out, t.seq...)
			out = append(out, p[start:]...)
			t.seq, t.flushed = t.seq[:0], true
		}
	}
	return out
}

// clipboard reports whether an OSC's payload (so far) is a clipboard
// write or read: OSC 52.
func clipboard(payload []byte) bool { return bytes.HasPrefix(payload, []byte("52;")) }

// maxHeld bounds what --alt-screen holds back of a sequence split between
// chunks.
const maxHeld = 256

// mode follows a private mode's set (on) or reset, and reports whether
// the terminal should see it.
func (t *Term) mode(on bool) bool {
	keep := true
	for i := range t.sc.NParams() {
		switch m := t.sc.Param(i, 0); m {
		case 47, 1047, 1049:
			switch {
			case on:
				t.alt = m
			case t.alt != 0:
				t.alt = 0
				if t.altScreen {
					t.Redraw, keep = true, false
				}
			}
		}
	}
	return keep
}

// End returns what leaves the terminal as it was before the attach: the
// session's alternate screen left (or, under --alt-screen, attach's own,
// which brings the earlier screen back), the modes the session switched
// put back, the title restored, and, when the session was drawn, the
// cursor on a line of its own below the session's last. It never moves
// the cursor otherwise.
func (t *Term) End() []byte {
	var b []byte
	b = append(b, t.ClearNote()...)
	switch {
	case t.altScreen:
		b = append(b, t.m.reset(t.rows)...)
		b = append(b, "\x1b[?1049l"...)
	case t.alt != 0:
		b = append(b, "\x1b[?"...)
		b = strconv.AppendInt(b, int64(t.alt), 10)
		b = append(b, 'l')
		b = append(b, t.m.reset(t.rows)...)
		b = append(b, "\r\n"...)
	default:
		b = append(b, t.m.reset(t.rows)...)
		if t.drew {
			b = append(b, "\r\n"...)
		}
	}
	t.alt = 0
	return append(b, popTitle...)
}

// Notice returns what shows msg in the terminal's title, the title before
// it saved (on terminals with a title stack): a status line, not output.
func (t *Term) Notice(msg string) []byte {
	var b []byte
	if !t.note {
		b = append(b, pushTitle...)
	}
	t.note, t.titled = true, false
	b = append(b, "\x1b]2;"...)
	b = append(b, titleText(msg)...)
	return append(b, '\a')
}

// ClearNote returns what takes a notice out of the title, if one is
// shown: the title from before the notice, or the one the session set
// meanwhile. A terminal without a title stack is left an empty title
// rather than the notice.
func (t *Term) ClearNote() []byte {
	if !t.note {
		return nil
	}
	t.note = false
	if t.titled && t.titleKnown {
		b := append([]byte(popTitle), "\x1b]2;"...)
		b = append(b, t.title...)
		return append(b, '\a')
	}
	return []byte("\x1b]2;\a" + popTitle)
}

// osc follows an OSC the session wrote: its title.
func (t *Term) osc(p []byte) {
	if len(p) < 2 || p[1] != ';' || p[0] != '0' && p[0] != '2' {
		return
	}
	t.titled = t.note
	t.titleKnown = len(p) < vtscan.MaxPayload // else cut short
	t.title = append(t.title[:0], p[2:]...)
}

// titleText is msg as a title may carry it: no control characters.
func titleText(msg string) []byte {
	b := make([]byte, 0, len(msg))
	for _, r := range msg {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			r = ' '
		}
		b = utf8.AppendRune(b, r)
	}
	return b
}

// Written follows output that reached the terminal by another way (an
// output lane: the holder wrote it), as Output would, and returns
// nothing to write.
func (t *Term) Written(p []byte) { t.Output(p) }
