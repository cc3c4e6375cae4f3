package session

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"termkeep/internal/wire"
)

// answerGrammar is the grammar of answers written independently of
// answers.go: what the parser classifies as an answer must match it.
var answerGrammar = map[queryKind]*regexp.Regexp{
	qDA1:         regexp.MustCompile(`^\x1b\[\?[0-9]{1,5}(;[0-9]{0,5}){0,15}c`),
	qDA2:         regexp.MustCompile(`^\x1b\[>[0-9]{1,6}(;[0-9]{1,6}){0,2}c`),
	qStatus:      regexp.MustCompile(`^\x1b\[[03]n`),
	qCursor:      regexp.MustCompile(`^\x1b\[[0-9]{1,5};[0-9]{1,5}R`),
	qFg:          regexp.MustCompile(`^\x1b\]10;rgb:[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}(\x07|\x1b\\)`),
	qBg:          regexp.MustCompile(`^\x1b\]11;rgb:[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}(\x07|\x1b\\)`),
	qCursorColor: regexp.MustCompile(`^\x1b\]12;rgb:[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}(\x07|\x1b\\)`),
}

// What real terminals answer is an answer, whole.
func TestAnswerGrammar(t *testing.T) {
	for _, c := range []struct {
		who, in string
		want    queryKind
	}{
		{"xterm.js DA1", "\x1b[?1;2c", qDA1},
		{"xterm DA1", "\x1b[?64;1;2;6;9;15;16;17;18;21;22;28c", qDA1},
		{"VT220 DA1 with a trailing separator", "\x1b[?62;1;2;6;8;9;15;c", qDA1},
		{"kitty DA1", "\x1b[?62;c", qDA1},
		{"VTE DA1", "\x1b[?65;1;9c", qDA1},
		{"VT100 DA1", "\x1b[?6c", qDA1},
		{"xterm.js DA2", "\x1b[>0;276;0c", qDA2},
		{"xterm DA2", "\x1b[>41;390;0c", qDA2},
		{"VTE DA2", "\x1b[>65;7600;1c", qDA2},
		{"screen DA2", "\x1b[>83;40800;0c", qDA2},
		{"a one-parameter DA2", "\x1b[>0c", qDA2},
		{"status", "\x1b[0n", qStatus},
		{"status, malfunction", "\x1b[3n", qStatus},
		{"CPR", "\x1b[24;80R", qCursor},
		{"CPR, large screen", "\x1b[65535;65535R", qCursor},
		{"xterm background, ST", "\x1b]11;rgb:0000/0000/0000\x1b\\", qBg},
		{"xterm.js background, BEL", "\x1b]11;rgb:1e1e/1e1e/1e1e\x07", qBg},
		{"foreground, short digits", "\x1b]10;rgb:f/f/f\x07", qFg},
		{"cursor colour, upper case", "\x1b]12;rgb:FFFF/A0a0/00\x07", qCursorColor},
	} {
		k, n := parseAnswer([]byte(c.in))
		if k != c.want || n != len(c.in) {
			t.Errorf("%s %q: parsed as kind %d, %d bytes; want kind %d, %d bytes", c.who, c.in, k, n, c.want, len(c.in))
		}
		if !answerGrammar[c.want].MatchString(c.in) {
			t.Errorf("%s %q: the test's own grammar refuses it", c.who, c.in)
		}
	}
}

// Hostile answers: from a writable viewer whatever is not a well-formed
// answer is its typing (it may type anyway) and never consumes the
// question; from a read-only viewer nothing is forwarded, and a frame is
// dropped silently only when it is nothing but well-formed answers.
func TestHostileAnswers(t *testing.T) {
	const inject = "\x1b]11;\x15touch /tmp/x\r\x07"
	for _, c := range []struct {
		name     string
		in       string
		ask      queryKind // the question outstanding
		pass     string    // what a writable viewer's frame sends to the pty
		consumed bool      // the question counts as answered
		only     bool      // a read-only viewer's frame is only answers
	}{
		{"the injection from the report", inject, qBg, inject, false, false},
		{"a control character inside a colour", "\x1b]11;rgb:00\x15/0000/0000\x07", qBg, "\x1b]11;rgb:00\x15/0000/0000\x07", false, false},
		{"a carriage return inside a colour", "\x1b]11;rgb:0000/0000/0000\r\x07", qBg, "\x1b]11;rgb:0000/0000/0000\r\x07", false, false},
		{"a BEL inside a colour", "\x1b]11;rgb:00\x07/0000/0000\x07", qBg, "\x1b]11;rgb:00\x07/0000/0000\x07", false, false},
		{"a second ESC inside: the inner answer is one, the rest is typing",
			"\x1b]11;rgb:0000/\x1b]11;rgb:0000/0000/0000\x07", qBg, "\x1b]11;rgb:0000/\x1b]11;rgb:0000/0000/0000\x07", true, false},
		{"an ESC that is no ST", "\x1b]11;rgb:0/0/0\x1bX", qBg, "\x1b]11;rgb:0/0/0\x1bX", false, false},
		{"an 8-bit ST", "\x1b]11;rgb:0/0/0\x9c", qBg, "\x1b]11;rgb:0/0/0\x9c", false, false},
		{"five hex digits", "\x1b]11;rgb:00000/0000/0000\x07", qBg, "\x1b]11;rgb:00000/0000/0000\x07", false, false},
		{"a missing component", "\x1b]11;rgb:0000/0000\x07", qBg, "\x1b]11;rgb:0000/0000\x07", false, false},
		{"an empty component", "\x1b]11;rgb:0000//0000\x07", qBg, "\x1b]11;rgb:0000//0000\x07", false, false},
		{"junk before the terminator", "\x1b]11;rgb:0000/0000/0000junk\x07", qBg, "\x1b]11;rgb:0000/0000/0000junk\x07", false, false},
		{"not hex", "\x1b]11;rgb:00g0/0000/0000\x07", qBg, "\x1b]11;rgb:00g0/0000/0000\x07", false, false},
		{"another colour space", "\x1b]11;rgbi:1/1/1\x07", qBg, "\x1b]11;rgbi:1/1/1\x07", false, false},
		{"a colour nobody can ask", "\x1b]13;rgb:0/0/0\x07", qBg, "\x1b]13;rgb:0/0/0\x07", false, false},
		{"typing after a good answer", "\x1b]11;rgb:0000/0000/0000\x07rm -rf ~\r", qBg, "\x1b]11;rgb:0000/0000/0000\x07rm -rf ~\r", true, false},
		{"typing before a good answer", "x\x1b[5;5R", qCursor, "x\x1b[5;5R", true, false},
		{"a 10 KiB colour", "\x1b]11;rgb:" + strings.Repeat("0", 10<<10) + "/0/0\x07", qBg, "\x1b]11;rgb:" + strings.Repeat("0", 10<<10) + "/0/0\x07", false, false},
		{"a CPR of 200 digits", "\x1b[" + strings.Repeat("1", 200) + ";1R", qCursor, "\x1b[" + strings.Repeat("1", 200) + ";1R", false, false},
		{"a CPR of three numbers", "\x1b[5;5;5R", qCursor, "\x1b[5;5;5R", false, false},
		{"a CPR with a space", "\x1b[ 5;5R", qCursor, "\x1b[ 5;5R", false, false},
		{"a CPR with a NUL", "\x1b[5\x00;5R", qCursor, "\x1b[5\x00;5R", false, false},
		{"a CPR with a sign", "\x1b[-5;5R", qCursor, "\x1b[-5;5R", false, false},
		{"a CPR missing its column", "\x1b[5;R", qCursor, "\x1b[5;R", false, false},
		{"DA1 of 17 parameters", "\x1b[?" + strings.Repeat("1;", 16) + "1c", qDA1, "\x1b[?" + strings.Repeat("1;", 16) + "1c", false, false},
		{"DA1 with a letter", "\x1b[?1;x;2c", qDA1, "\x1b[?1;x;2c", false, false},
		{"DA1 with nothing in it", "\x1b[?c", qDA1, "\x1b[?c", false, false},
		{"DA2 of four parameters", "\x1b[>0;276;0;1c", qDA2, "\x1b[>0;276;0;1c", false, false},
		{"the status question, not its answer", "\x1b[5n", qStatus, "\x1b[5n", false, false},
		{"a lone ESC, then an answer", "\x1b\x1b[5;5R", qCursor, "\x1b\x1b[5;5R", true, false},
		{"an answer cut across frames: the first half", "\x1b]11;rgb:0000/00", qBg, "\x1b]11;rgb:0000/00", false, false},
		{"an answer cut across frames: the second half", "00/0000\x07", qBg, "00/0000\x07", false, false},
		{"a lying CPR, well-formed: a read-only one is dropped unsent", "\x1b[20;20R", qCursor, "\x1b[20;20R", true, true},
		{"two answers", "\x1b[?1;2c\x1b[20;20R", qCursor, "\x1b[20;20R", true, true},
		{"an answer nobody asked for", "\x1b[?1;2c", qCursor, "", false, true},
		{"an empty frame", "", qCursor, "", false, false},
	} {
		now := time.Now()
		var a arbiter
		a.asked(c.ask, 1, now, true)
		got := filterAnswers([]byte(c.in), func(k queryKind) bool { return a.answered(k, now) })
		if string(got) != c.pass {
			t.Errorf("%s: a writable viewer's %q sent %q, want %q", c.name, c.in, got, c.pass)
		}
		if consumed := !a.outstanding(c.ask, now); consumed != c.consumed {
			t.Errorf("%s: %q answered the question: %v, want %v", c.name, c.in, consumed, c.consumed)
		}
		if only := onlyAnswers([]byte(c.in)); only != c.only {
			t.Errorf("%s: a read-only viewer's %q is only answers: %v, want %v", c.name, c.in, only, c.only)
		}
	}
}

// Who answers a question: a writable viewer that will see it, or else the
// model; whichever answers first, one answer passes.
func TestWhoAnswers(t *testing.T) {
	type step struct {
		op   string    // ask, leave (a writable viewer leaves), viewer, model
		k    queryKind // ask, viewer
		off  uint64    // ask: the question's end; leave: writers left see questions ending after it (0: none left)
		seen bool      // ask: a writable viewer will see it
		want bool      // ask: the model must answer; viewer, model: the answer passes
		n    int       // leave: questions handed to the model
	}
	now := time.Now()
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"only read-only viewers: the model answers, once", []step{
			{op: "ask", k: qBg, off: 10, seen: false, want: true},
			{op: "model", k: qBg, want: true},
			{op: "model", k: qBg, want: false},
		}},
		{"a writable viewer sees it: it answers, the model does not", []step{
			{op: "ask", k: qCursor, off: 10, seen: true, want: false},
			{op: "viewer", k: qCursor, want: true},
			{op: "leave", off: 0, n: 0},
		}},
		{"a writable viewer arrives while the model answers: one answer", []step{
			{op: "ask", k: qBg, off: 10, seen: false, want: true},
			{op: "viewer", k: qBg, want: true},
			{op: "model", k: qBg, want: false},
		}},
		{"the writable viewer leaves before it answers: the model does", []step{
			{op: "ask", k: qBg, off: 10, seen: true, want: false},
			{op: "ask", k: qCursor, off: 20, seen: true, want: false},
			{op: "leave", off: 0, n: 2},
			{op: "leave", off: 0, n: 0},
			{op: "model", k: qBg, want: true},
			{op: "model", k: qCursor, want: true},
			{op: "viewer", k: qCursor, want: false},
		}},
		{"another writable viewer that saw the question stays: it answers", []step{
			{op: "ask", k: qDA1, off: 10, seen: true, want: false},
			{op: "leave", off: 5, n: 0},
			{op: "viewer", k: qDA1, want: true},
		}},
		{"the writable viewer left came after the question: the model answers", []step{
			{op: "ask", k: qDA1, off: 10, seen: true, want: false},
			{op: "ask", k: qDA2, off: 30, seen: true, want: false},
			{op: "leave", off: 20, n: 1},
			{op: "model", k: qDA1, want: true},
			{op: "viewer", k: qDA2, want: true},
		}},
		{"a read-only viewer's answer is never offered: the question stays for the model", []step{
			{op: "ask", k: qCursor, off: 10, seen: false, want: true},
			{op: "model", k: qCursor, want: true},
		}},
	} {
		var a arbiter
		for i, s := range c.steps {
			var got bool
			switch s.op {
			case "ask":
				got = a.asked(s.k, s.off, now, s.seen)
			case "viewer", "model":
				got = a.answered(s.k, now)
			case "leave":
				qs := a.orphaned(now, func(off uint64) bool { return s.off != 0 && s.off < off })
				if len(qs) != s.n {
					t.Errorf("%s: step %d: %d questions handed to the model, want %d", c.name, i, len(qs), s.n)
				}
				continue
			}
			if got != s.want {
				t.Errorf("%s: step %d (%s): %v, want %v", c.name, i, s.op, got, s.want)
			}
		}
	}

	// An expired question is handed to nobody; a flood past maxPending
	// is not recorded, so the model does not answer it either.
	var a arbiter
	a.asked(qBg, 1, now.Add(-2*queryTTL), true)
	if qs := a.orphaned(now, func(uint64) bool { return false }); len(qs) != 0 {
		t.Errorf("an expired question was handed to the model: %v", qs)
	}
	for i := range maxPending {
		a.asked(qDA1, uint64(i), now, true)
	}
	if a.asked(qDA1, 999, now, false) {
		t.Error("a question past maxPending was handed to the model")
	}
}

// Which viewers will answer a question: a writable one whose output
// includes it.
func TestWriterSees(t *testing.T) {
	for _, c := range []struct {
		name    string
		viewers []*viewer
		off     uint64
		want    bool
	}{
		{"nobody", nil, 10, false},
		{"read-only viewers only", []*viewer{{readOnly: true, fromKnown: true}, {readOnly: true, fromKnown: true}}, 10, false},
		{"a writable viewer from before", []*viewer{{readOnly: true, fromKnown: true}, {fromKnown: true, liveFrom: 5}}, 10, true},
		{"a writable viewer from after", []*viewer{{fromKnown: true, liveFrom: 10}}, 10, false},
		{"a writable viewer still being welcomed", []*viewer{{}}, 10, false},
	} {
		h := &Host{viewers: map[*viewer]struct{}{}}
		for _, v := range c.viewers {
			h.viewers[v] = struct{}{}
		}
		if got := h.writerSeesLocked(c.off); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func FuzzAnswers(f *testing.F) {
	for _, s := range []string{
		"\x1b[?1;2c", "\x1b[>0;276;0c", "\x1b[0n", "\x1b[24;80R", "\x1b[1;5R",
		"\x1b]11;rgb:0000/0000/0000\x1b\\", "\x1b]10;rgb:f/f/f\x07",
		"\x1b]11;\x15touch /tmp/x\r\x07", "ls -l\r\x1b[A\x1b[?62;c\x1b\x1b]12;rgb:1/2/3\x07",
		"\x1b]11;rgb:0000/\x1b]11;rgb:0000/0000/0000\x07",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var joined []byte
		var answers [][]byte
		splitInput(in, func(piece []byte, k queryKind) {
			if len(piece) == 0 {
				t.Fatalf("an empty piece")
			}
			joined = append(joined, piece...)
			if k == qNone {
				return
			}
			if re := answerGrammar[k]; re == nil || re.FindIndex(piece) == nil || re.FindIndex(piece)[1] != len(piece) {
				t.Fatalf("%q classified as an answer of kind %d", piece, k)
			}
			answers = append(answers, piece)
		})
		if !bytes.Equal(joined, in) {
			t.Fatalf("the pieces %q are not the input %q", joined, in)
		}
		// Nothing well-formed is left in the typing: at every ESC outside
		// the answers found, the grammar finds no answer either. (No
		// answer is longer than 128 bytes, and looking no further keeps
		// this linear in a large input.)
		inAnswer := make([]bool, len(in))
		pos := 0
		splitInput(in, func(piece []byte, k queryKind) {
			for j := range piece {
				inAnswer[pos+j] = k != qNone
			}
			pos += len(piece)
		})
		for i := range in {
			if in[i] != 0x1b || inAnswer[i] {
				continue
			}
			for k, re := range answerGrammar {
				if re.Match(in[i:min(len(in), i+128)]) {
					t.Fatalf("%q at %d is an answer of kind %d left as typing", in, i, k)
				}
			}
		}
		// A writable viewer loses nothing but the answers it sends and
		// that no question takes.
		passed := filterAnswers(in, func(queryKind) bool { return false })
		dropped := 0
		for _, a := range answers {
			k, _ := parseAnswer(a)
			if !alsoKey(k, a) {
				dropped += len(a)
			}
		}
		if len(passed)+dropped != len(in) {
			t.Fatalf("%q: passed %d bytes and dropped %d answer bytes of %d", in, len(passed), dropped, len(in))
		}
		if all := filterAnswers(in, func(queryKind) bool { return true }); !bytes.Equal(all, in) {
			t.Fatalf("with every answer taken %q became %q", in, all)
		}
		n := 0
		for _, a := range answers {
			n += len(a)
		}
		if onlyAnswers(in) != (len(in) > 0 && n == len(in)) {
			t.Fatalf("%q: onlyAnswers disagrees with the pieces", in)
		}
	})
}

// A read-only viewer is told of a refused frame at once, then at most once
// a second for each kind.
func TestRefusals(t *testing.T) {
	var r refusals
	t0 := time.Now()
	for _, c := range []struct {
		typ  wire.Type
		at   time.Duration
		want bool
	}{
		{wire.TypeInput, 0, true},
		{wire.TypeResize, 0, true},
		{wire.TypeInput, 10 * time.Millisecond, false},
		{wire.TypeSignal, 20 * time.Millisecond, true},
		{wire.TypeInput, 999 * time.Millisecond, false},
		{wire.TypeInput, time.Second, true},
		{wire.TypeResize, 5 * time.Second, true},
		{wire.TypeInput, 500 * time.Millisecond, false}, // the clock stepped back
	} {
		if got := r.notify(c.typ, t0.Add(c.at)); got != c.want {
			t.Errorf("%s at %v: told %v, want %v", c.typ, c.at, got, c.want)
		}
	}
}
