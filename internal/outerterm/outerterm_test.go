package outerterm

import (
	"bytes"
	"strings"
	"testing"
)

// feed passes chunks through t.Output and returns what reached the
// terminal.
func feed(t *Term, chunks ...string) string {
	var out []byte
	for _, c := range chunks {
		out = append(out, t.Output([]byte(c))...)
	}
	return string(out)
}

func TestEndLeavesWhatTheSessionSwitchedOn(t *testing.T) {
	for _, c := range []struct {
		name   string
		chunks []string
		end    string // what End writes before its line break and the title's pop
	}{
		{"plain output", []string{"hello\r\n"}, ""},
		{"vim", []string{"\x1b[?1049h\x1b[?1h\x1b=\x1b[?25l~\r\n~"}, "\x1b[?1049l\x1b[?1l\x1b[?25h\x1b>"},
		{"vim split in the switch", []string{"\x1b[?10", "49", "h text"}, "\x1b[?1049l"},
		{"less with 1047", []string{"\x1b[?1047h"}, "\x1b[?1047l"},
		{"old curses with 47", []string{"\x1b[?47h"}, "\x1b[?47l"},
		{"in and out again", []string{"\x1b[?1049h x \x1b[?1049l"}, ""},
		{"several modes in one CSI", []string{"\x1b[?1000;1049;25h"}, "\x1b[?1049l\x1b[?1000l"},
		{"a mode switched on and off again", []string{"\x1b[?2004h$ ", "\x1b[?2004l"}, ""},
		{"bracketed paste and a colour left on", []string{"\x1b[?2004h\x1b[31m$ "}, "\x1b[?2004l\x1b[m"},
		{"a colour reset", []string{"\x1b[1;31mred\x1b[0m"}, ""},
		{"not private: insert mode", []string{"\x1b[4h"}, "\x1b[4l"},
		{"not private", []string{"\x1b[1049h"}, ""},
		{"aborted by CAN", []string{"\x1b[?10\x1849h"}, ""},
		{"a reset of a screen never set", []string{"\x1b[?1049l"}, ""},
		{"a scroll region, put back where the cursor is", []string{"\x1b[2;20r"}, "\x1b7\x1b[r\x1b8"},
		{"a full scroll region is no region", []string{"\x1b[2;20r\x1b[r"}, ""},
		{"origin mode: reset, the cursor to the last row", []string{"\x1b[?6h"}, "\x1b[?6l\x1b[24;1H"},
		{"the cursor hidden and a shape", []string{"\x1b[?25l\x1b[5 q"}, "\x1b[?25h\x1b[0 q"},
		{"line drawing", []string{"\x1b(0qqq\x1b(B"}, "\x1b(B\x0f"},
		{"the kitty keyboard protocol", []string{"\x1b[>1u"}, "\x1b[<99u"},
		{"modifyOtherKeys", []string{"\x1b[>4;2m"}, "\x1b[>4m"},
		{"the mouse", []string{"\x1b[?1000h\x1b[?1006h"}, "\x1b[?1000l\x1b[?1006l"},
		{"DECCOLM is never touched", []string{"\x1b[?3h"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			term := New(80, 24, false)
			term.Snapshot([]byte("\x1bc"))
			if got := feed(term, c.chunks...); got != strings.Join(c.chunks, "") {
				t.Fatalf("output changed on the normal screen: %q", got)
			}
			end := string(term.End())
			if want := c.end + "\r\n" + popTitle; end != want {
				t.Fatalf("End = %q, want %q", end, want)
			}
		})
	}
}

// An attach that drew nothing (no such session, a refusal) writes nothing
// at its end but the title it saved: the user's screen stays as it was.
func TestEndOfAnAttachThatDrewNothing(t *testing.T) {
	term := New(80, 24, false)
	if b := string(term.Begin()); b != pushTitle {
		t.Fatalf("Begin = %q", b)
	}
	if e := string(term.End()); e != popTitle {
		t.Fatalf("End = %q, want only the title's pop", e)
	}
}

// Under --alt-screen, the session's switches back to the normal screen are
// kept from the terminal (where the user's own screen waits), and ask for a
// redraw; everything else passes unchanged, in any split of the output.
func TestAltScreenFiltersSwitchesBack(t *testing.T) {
	for _, c := range []struct {
		name   string
		chunks []string
		want   string
		redraw bool
	}{
		{"plain", []string{"abc"}, "abc", false},
		{"enter kept", []string{"a\x1b[?1049hb"}, "a\x1b[?1049hb", false},
		{"leave dropped", []string{"\x1b[?1049ha\x1b[?1049lb"}, "\x1b[?1049hab", true},
		{"leave split", []string{"\x1b[?1049ha\x1b[?1", "049", "lb"}, "\x1b[?1049hab", true},
		{"other CSI split", []string{"x\x1b[3", "1mZ"}, "x\x1b[31mZ", false},
		{"ESC at a chunk's end", []string{"x\x1b", "[?25l"}, "x\x1b[?25l", false},
		{"OSC not held", []string{"\x1b]0;ti", "tle\x07"}, "\x1b]0;title\x07", false},
		{"leave without enter kept", []string{"\x1b[?1049l"}, "\x1b[?1049l", false},
		{"long CSI let through", []string{"\x1b[" + strings.Repeat("1;", 200), "1049l"}, "\x1b[" + strings.Repeat("1;", 200) + "1049l", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			term := New(80, 24, true)
			if got := feed(term, c.chunks...); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			if term.Redraw != c.redraw {
				t.Fatalf("Redraw = %v, want %v", term.Redraw, c.redraw)
			}
		})
	}
}

func TestSnapshotKeepsTheScrollback(t *testing.T) {
	snap := "\x1bc\x1b[20lscreen"
	term := New(80, 5, false)
	first := string(term.Snapshot([]byte(snap)))
	if strings.Contains(first, "\x1bc") || strings.Contains(first, "\x1b[2J") || strings.Contains(first, "\x1b[3J") {
		t.Fatalf("the first snapshot clears the terminal: %q", first)
	}
	if want := Reset + "\x1b[5;1H\n\n\n\n\n\x1b[H\x1b[20lscreen"; first != want {
		t.Fatalf("first snapshot %q, want %q", first, want)
	}
	// A later one (a resync) redraws in place.
	if again := string(term.Snapshot([]byte(snap))); again != Reset+"\x1b[H\x1b[2J\x1b[20lscreen" {
		t.Fatalf("second snapshot %q", again)
	}
	alt := New(80, 5, true)
	if b := string(alt.Begin()); !strings.Contains(b, "\x1b[?1049h") || !strings.HasPrefix(b, pushTitle) {
		t.Fatalf("--alt-screen begins with %q", b)
	}
	if s := string(alt.Snapshot([]byte(snap))); s != Reset+"\x1b[H\x1b[2J\x1b[20lscreen" {
		t.Fatalf("--alt-screen snapshot %q", s)
	}
	if e := string(alt.End()); e != "\x1b[?1049l"+popTitle {
		t.Fatalf("--alt-screen end %q", e)
	}
}

// A notice goes in the title, never among the output: showing or
// clearing it writes nothing that moves the cursor or erases a cell.
func TestNoticeIsInTheTitle(t *testing.T) {
	term := New(10, 24, false)
	term.Snapshot([]byte("\x1bc"))
	n := string(term.Notice("connection lost;\x1b[2J reconnecting"))
	if n != pushTitle+"\x1b]2;connection lost; [2J reconnecting\a" {
		t.Fatalf("notice %q", n)
	}
	if n := string(term.Notice("again")); n != "\x1b]2;again\a" {
		t.Fatalf("a second notice %q: the title is saved once", n)
	}
	if c := string(term.ClearNote()); c != "\x1b]2;\a"+popTitle {
		t.Fatalf("clear %q", c)
	}
	if c := term.ClearNote(); c != nil {
		t.Fatalf("a second clear writes %q", c)
	}
	// The session sets its title while a notice shows: clearing it
	// shows the session's.
	term.Notice("x")
	feed(term, "out\x1b]0;vim main.go\x07put")
	if c := string(term.ClearNote()); c != popTitle+"\x1b]2;vim main.go\a" {
		t.Fatalf("clear after the session's title %q", c)
	}
	term.Notice("x")
	if e := string(term.End()); e != "\x1b]2;\a"+popTitle+"\r\n"+popTitle {
		t.Fatalf("End with a notice: %q", e)
	}
}

// A read-only attach's terminal gets no clipboard write (OSC 52), in any
// split of the output, and everything else as it is.
func TestDropClipboard(t *testing.T) {
	for _, c := range []struct {
		name   string
		chunks []string
		want   string
	}{
		{"plain", []string{"abc"}, "abc"},
		{"a write ended by BEL", []string{"a\x1b]52;c;aGVsbG8=\x07b"}, "ab"},
		{"a write ended by ST", []string{"a\x1b]52;c;aGVsbG8=\x1b\\b"}, "ab"},
		{"split in its prefix", []string{"a\x1b]5", "2;c;aGVs", "bG8=\x07b"}, "ab"},
		{"split after ST's ESC", []string{"a\x1b]52;c;eA==\x1b", "\\b"}, "ab"},
		{"a long one", []string{"a\x1b]52;c;" + strings.Repeat("QUFB", 100000), strings.Repeat("QUFB", 1000) + "\x07b"}, "ab"},
		{"a read", []string{"\x1b]52;c;?\x07"}, ""},
		{"other OSCs pass", []string{"\x1b]0;title\x07x\x1b]53;y\x07"}, "\x1b]0;title\x07x\x1b]53;y\x07"},
		{"an OSC 5 split is let through", []string{"\x1b]5", "3;y\x07z"}, "\x1b]53;y\x07z"},
		{"a colour after it", []string{"\x1b]52;c;eA==\x07\x1b[31mred"}, "\x1b[31mred"},
	} {
		t.Run(c.name, func(t *testing.T) {
			term := New(80, 24, false)
			term.DropClipboard()
			if got := feed(term, c.chunks...); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
	// Without it, a write passes: the user's own terminal decides.
	if got := feed(New(80, 24, false), "\x1b]52;c;eA==\x07"); got != "\x1b]52;c;eA==\x07" {
		t.Fatalf("a read-write attach's terminal got %q", got)
	}
}

// Whatever the split of the output, the terminal sees the same bytes.
func FuzzOutputSplit(f *testing.F) {
	f.Add([]byte("\x1b[?1049ha\x1b[?1049lb\x1b]0;t\x07"), uint8(3), true)
	f.Add([]byte("x\x1b[31mZ\x1b[?47h"), uint8(1), false)
	f.Add([]byte("a\x1b]52;c;eA==\x1b\\b\x1b]5"), uint8(0x83), false)
	f.Fuzz(func(t *testing.T, p []byte, step uint8, alt bool) {
		clip := step&0x80 != 0 // a read-only attach's: no clipboard writes
		whole := New(80, 24, alt)
		split := New(80, 24, alt)
		if clip {
			whole.DropClipboard()
			split.DropClipboard()
		}
		want := string(whole.Output(bytes.Clone(p)))
		n := int(step%16) + 1
		var got []byte
		for i := 0; i < len(p); i += n {
			got = append(got, split.Output(bytes.Clone(p[i:min(i+n, len(p))]))...)
		}
		// A sequence held back at the end is the same in both. (A
		// clipboard write dropped may take with it the unfinished string
		// it cut short, or not, as the split falls: the terminal ignores
		// those either way.)
		if (!clip || !bytes.Contains(p, []byte("52;"))) && string(got)+string(split.seq) != want+string(whole.seq) {
			t.Fatalf("split %d: %q, whole: %q", n, string(got)+string(split.seq), want+string(whole.seq))
		}
		if !alt && !clip && string(got) != string(p) {
			t.Fatalf("normal screen changed the output")
		}
		if clip && strings.Contains(string(got)+string(split.seq), "\x1b]52;") {
			t.Fatalf("a clipboard write reached the terminal: %q", got)
		}
		if split.alt != whole.alt || split.Redraw != whole.Redraw {
			t.Fatalf("state differs: alt %d/%d redraw %v/%v", split.alt, whole.alt, split.Redraw, whole.Redraw)
		}
	})
}
