package shellmark

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

const (
	a = "\x1b]133;A\x07"
	b = "\x1b]133;B\x07"
	c = "\x1b]133;C\x07"
)

func d(st string) string { return "\x1b]133;D;" + st + "\x07" }

// describe renders a Status in one line for the table.
func describe(s Status) string {
	out := string(s.State)
	if s.Running != nil {
		out += fmt.Sprintf(" running=%q#%d@%d", s.Running.Line, s.Running.Seq, s.Running.Output)
	}
	if s.Last != nil {
		st := "?"
		if s.Last.Status != nil {
			st = fmt.Sprint(*s.Last.Status)
		}
		if s.Last.HasOutput {
			out += fmt.Sprintf(" last=%q#%d[%d,%d)=%s", s.Last.Line, s.Last.Seq, s.Last.Output, s.Last.End, st)
		} else {
			out += " last=no-output=" + st
		}
	}
	return out
}

// feed gives the tracker in in pieces of at most n bytes (0: whole), each
// arriving one second after the one before.
func feed(in string, n int) *Tracker {
	t := NewTracker()
	base := time.Unix(1000, 0)
	off := 0
	for i := 0; off < len(in); i++ {
		end := len(in)
		if n > 0 {
			end = min(off+n, len(in))
		}
		t.Write(uint64(off), base.Add(time.Duration(i)*time.Second), []byte(in[off:end]))
		off = end
	}
	return t
}

func TestTracker(t *testing.T) {
	prompt := a + "$ " + b
	for _, tc := range []struct {
		name, in, want string
	}{
		{"nothing", "", "unknown"},
		{"plain output, no integration", "hello\r\n$ ", "unknown"},
		{"a prompt", prompt, "prompt"},
		{"typing at the prompt", prompt + "mak", "prompt"},
		{"running", prompt + "make test\r\n" + c + "building", `running running="make test"#1@37`},
		{"ended", prompt + "false\r\n" + c + "out\r\n" + d("1") + prompt,
			`prompt last="false"#1[33,38)=1`},
		{"two commands: the last counts", prompt + "true\r\n" + c + d("0") + prompt + "ls\r\n" + c + "x\r\n" + d("2") + prompt,
			`prompt last="ls"#2[72,75)=2`},
		{"a D without a C ends no command", prompt + d("0") + prompt, "prompt last=no-output=0"},
		{"a D with no status", prompt + "x\r\n" + c + "\x1b]133;D\x07", `returning last="x"#1[29,29)=?`},
		{"a D with a bad status", prompt + "x\r\n" + c + d("abc"), `returning last="x"#1[29,29)=?`},
		// The user's prompt hooks run between D and A: what is typed then
		// is read by whatever reads the terminal first.
		{"ended, the prompt hooks running", prompt + "true\r\n" + c + d("0") + "hook output",
			`returning last="true"#1[32,32)=0`},
		{"ended, the prompt drawn after the hooks", prompt + "true\r\n" + c + d("0") + "hook output" + prompt,
			`prompt last="true"#1[32,32)=0`},
		{"a C with no B: no command line", a + c + "out", `running running=""#1@16`},
		// A program printing a fake D in its output: the tracker takes it
		// as a terminal would, and the real D that follows has no C.
		{"a fake D in the output", prompt + "cat f\r\n" + c + "x" + d("7") + "y\r\n" + d("0") + prompt,
			`prompt last=no-output=0`},
		// Marks that are not OSC 133, or not whole, are nothing.
		{"other OSCs", "\x1b]1330;A\x07\x1b]133\x07\x1b]133;\x07\x1b]133;AB\x07\x1b]7;file:///x\x07", "unknown"},
		{"a cancelled mark", "\x1b]133;A\x18", "unknown"},
		{"a mark ended by ST", "\x1b]133;A\x1b\\$ " + b + "ls\r\n\x1b]133;C\x1b\\out", `running running="ls"#1@30`},
		// A nested shell: its prompt while the outer shell runs it, its
		// command, then its exit, the outer shell's D and prompt.
		{"a nested shell", prompt + "bash\r\n" + c + prompt + "make\r\n" + c + "m\r\n" + d("2") + prompt,
			`prompt last="make"#2[64,67)=2`},
		{"a nested shell exits", prompt + "bash\r\n" + c + prompt + "exit\r\n" + c + d("0") + d("0") + prompt,
			`prompt last=no-output=0`},
		{"a huge command line is bounded", prompt + strings.Repeat("x", 10000) + "\r\n" + c,
			`running running="` + strings.Repeat("x", MaxLabel) + `"#1@10028`},
		{"a backspace edits the line", prompt + "lz\x08s\r\n" + c, `running running="ls"#1@32`},
		// A paste zsh shows in reverse, then draws again in place (as
		// captured from zsh 5.9).
		{"zsh redraws a paste", a + "$ " + b + "\x1b[K\x1b[?2004h\x1b[7mecho hi\x1b[27m\x1b[7D\x1b[27me\x1b[27mc\x1b[27mh\x1b[27mo\x1b[27m \x1b[27mh\x1b[27mi\x1b[?2004l\r\r\n" + c,
			`running running="echo hi"#1@110`},
		// fish returns to the row's start, moves past its prompt and
		// draws the line highlighted (as captured from fish 3.7).
		{"fish redraws the line", a + "me@host ~> " + b + "\x1b[K\r\x1b[11Cecho hi\r\x1b[18C\x1b[7D\x1b[34mecho\x1b[m \x1b[36mhi\r\x1b[18C\x1b[m\r\n" + c,
			`running running="echo hi"#1@92`},
		{"cursor moves past both ends", prompt + "\x1b[99999D\x1b[99999Cx\x1b[3Gy\r\n" + c, `running running="y"#1@50`},
		// An A or a B in a file printed: past a prompt's worth of bytes
		// the command line is given up, and the C that ends it has none.
		{"a B and a flood", a + "$ " + b + strings.Repeat("y\r\n", 30000) + c, `running running=""#1@90026`},
		{"an A and a flood", a + strings.Repeat("y\r\n", 30000) + b + "ls\r\n" + c, `running running="ls"#1@90028`},
		{"erase and insert", prompt + "abcd\x1b[3D\x1b[P\x1b[2@XY\r\n" + c, `running running="aXYcd"#1@45`},
	} {
		want := tc.want
		for _, n := range []int{0, 1, 2, 3, 7} {
			got := describe(feed(tc.in, n).Status())
			if got != want {
				t.Errorf("%s, in pieces of %d: %s\nwant %s", tc.name, n, got, want)
			}
		}
	}
}

// Since and Start are the times the marks' bytes arrived.
func TestTrackerTimes(t *testing.T) {
	tr := NewTracker()
	t0 := time.Unix(5000, 0)
	tr.Write(0, t0, []byte(a+"$ "+b+"sleep 9\r\n"))
	if s := tr.Status(); s.State != AtPrompt || !s.Since.Equal(t0) {
		t.Fatalf("%+v", s)
	}
	tr.Write(100, t0.Add(time.Second), []byte(c))
	s := tr.Status()
	if s.State != Running || !s.Since.Equal(t0.Add(time.Second)) || !s.Running.Start.Equal(t0.Add(time.Second)) || s.Running.Output != 108 {
		t.Fatalf("%+v %+v", s, s.Running)
	}
	tr.Write(108, t0.Add(9*time.Second), []byte(d("0")+a))
	s = tr.Status()
	if s.State != AtPrompt || !s.Last.At.Equal(t0.Add(9*time.Second)) || s.Last.End != 108 || s.Marks != 5 {
		t.Fatalf("%+v %+v", s, s.Last)
	}
	// The status handed out is a copy.
	s.Last.Line = "changed"
	if tr.Status().Last.Line != "sleep 9" {
		t.Fatal("Status shares the tracker's memory")
	}
}

// A gap drops a half-read mark; what is known stays.
func TestTrackerReset(t *testing.T) {
	tr := NewTracker()
	tr.Write(0, time.Time{}, []byte(a+"$ "+b+"ls\r\n"+c+"\x1b]133;"))
	tr.Reset()
	tr.Write(1000, time.Time{}, []byte("D;0\x07"))
	if s := tr.Status(); s.State != Running || s.Last != nil {
		t.Fatalf("a mark across a gap was taken: %s", describe(s))
	}
}

// Any bytes, cut anywhere, give the same marks; labels are bounded UTF-8;
// offsets lie inside the stream.
func FuzzScanner(f *testing.F) {
	f.Add([]byte(a+"$ "+b+"git st\x08\x08us\r\n"+c+"out"+d("0")), 5)
	f.Add([]byte("\x1b]133;A\x1b\\\x1b]133;D;-1\x1b]133;B\x07\x08\x08x\x1b]133;C"), 3)
	f.Add([]byte("\x1b]133;C\x1b]133;D;99999999999999999999\x07"), 0)
	f.Fuzz(func(t *testing.T, p []byte, cut int) {
		cut = min(max(cut, 0), len(p))
		scan := func(pieces ...[]byte) string {
			var out []string
			s := Scanner{Emit: func(m Mark) {
				if !utf8.ValidString(m.Label) || utf8.RuneCountInString(m.Label) > MaxLabel {
					t.Fatalf("label %q", m.Label)
				}
				if m.At >= m.End || m.End > uint64(len(p)) {
					t.Fatalf("mark [%d,%d) in %d bytes", m.At, m.End, len(p))
				}
				st := -1
				if m.Status != nil {
					st = *m.Status
				}
				out = append(out, fmt.Sprintf("%c@%d-%d=%d %q", m.Kind, m.At, m.End, st, m.Label))
			}}
			off := 0
			for _, q := range pieces {
				s.Write(uint64(off), time.Time{}, q)
				off += len(q)
			}
			return strings.Join(out, "\n")
		}
		whole, split := scan(p), scan(p[:cut], p[cut:])
		if whole != split {
			t.Fatalf("cut at %d:\n%s\nwhole:\n%s", cut, split, whole)
		}
		tr := NewTracker()
		tr.Write(0, time.Time{}, p)
		if s := tr.Status(); s.Last != nil && s.Last.HasOutput && s.Last.Output > s.Last.End {
			t.Fatalf("output range [%d,%d)", s.Last.Output, s.Last.End)
		}
	})
}

// The tracker on plain output costs a scan for ESC per chunk; on output
// full of colors (ls, compilers), a step per escape sequence.
func BenchmarkTracker(bm *testing.B) {
	plain := []byte(strings.Repeat("plain output line of a build, nothing special\r\n", 1400))
	colored := []byte(strings.Repeat("\x1b[1;32mok\x1b[m   pkg/path/to/something\t0.012s\r\n", 1400))
	for _, c := range []struct {
		name string
		p    []byte
	}{{"plain", plain}, {"colored", colored}} {
		bm.Run(c.name, func(bm *testing.B) {
			t := NewTracker()
			start := a + "$ " + b + "make\r\n" + "\x1b]133;C\x07"
			t.Write(0, time.Time{}, []byte(start))
			bm.SetBytes(int64(len(c.p)))
			off := uint64(len(start))
			for range bm.N {
				t.Write(off, time.Time{}, c.p)
				off += uint64(len(c.p))
			}
		})
	}
}
