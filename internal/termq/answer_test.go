package termq

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// answerGrammar is the grammar of answers written independently of
// answer.go: what the parser classifies as an answer must match it.
var answerGrammar = map[Kind]*regexp.Regexp{
	DA1:         regexp.MustCompile(`^\x1b\[\?[0-9]{1,5}(;[0-9]{0,5}){0,15}c`),
	DA2:         regexp.MustCompile(`^\x1b\[>[0-9]{1,6}(;[0-9]{1,6}){0,2}c`),
	Status:      regexp.MustCompile(`^\x1b\[[03]n`),
	Cursor:      regexp.MustCompile(`^\x1b\[[0-9]{1,5};[0-9]{1,5}R`),
	Foreground:  regexp.MustCompile(`^\x1b\]10;rgb:[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}(\x07|\x1b\\)`),
	Background:  regexp.MustCompile(`^\x1b\]11;rgb:[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}(\x07|\x1b\\)`),
	CursorColor: regexp.MustCompile(`^\x1b\]12;rgb:[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}(\x07|\x1b\\)`),
}

// What real terminals answer is an answer, whole.
func TestAnswerGrammar(t *testing.T) {
	for _, c := range []struct {
		who, in string
		want    Kind
	}{
		{"xterm.js DA1", "\x1b[?1;2c", DA1},
		{"xterm DA1", "\x1b[?64;1;2;6;9;15;16;17;18;21;22;28c", DA1},
		{"VT220 DA1 with a trailing separator", "\x1b[?62;1;2;6;8;9;15;c", DA1},
		{"kitty DA1", "\x1b[?62;c", DA1},
		{"VTE DA1", "\x1b[?65;1;9c", DA1},
		{"VT100 DA1", "\x1b[?6c", DA1},
		{"xterm.js DA2", "\x1b[>0;276;0c", DA2},
		{"xterm DA2", "\x1b[>41;390;0c", DA2},
		{"VTE DA2", "\x1b[>65;7600;1c", DA2},
		{"screen DA2", "\x1b[>83;40800;0c", DA2},
		{"a one-parameter DA2", "\x1b[>0c", DA2},
		{"status", "\x1b[0n", Status},
		{"status, malfunction", "\x1b[3n", Status},
		{"CPR", "\x1b[24;80R", Cursor},
		{"CPR, large screen", "\x1b[65535;65535R", Cursor},
		{"xterm background, ST", "\x1b]11;rgb:0000/0000/0000\x1b\\", Background},
		{"xterm.js background, BEL", "\x1b]11;rgb:1e1e/1e1e/1e1e\x07", Background},
		{"foreground, short digits", "\x1b]10;rgb:f/f/f\x07", Foreground},
		{"cursor colour, upper case", "\x1b]12;rgb:FFFF/A0a0/00\x07", CursorColor},
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
		ask      Kind   // the question outstanding
		pass     string // what a writable viewer's frame sends to the pty
		consumed bool   // the question counts as answered
		only     bool   // a read-only viewer's frame is only answers
	}{
		{"the injection from the report", inject, Background, inject, false, false},
		{"a control character inside a colour", "\x1b]11;rgb:00\x15/0000/0000\x07", Background, "\x1b]11;rgb:00\x15/0000/0000\x07", false, false},
		{"a carriage return inside a colour", "\x1b]11;rgb:0000/0000/0000\r\x07", Background, "\x1b]11;rgb:0000/0000/0000\r\x07", false, false},
		{"a BEL inside a colour", "\x1b]11;rgb:00\x07/0000/0000\x07", Background, "\x1b]11;rgb:00\x07/0000/0000\x07", false, false},
		{"a second ESC inside: the inner answer is one, the rest is typing",
			"\x1b]11;rgb:0000/\x1b]11;rgb:0000/0000/0000\x07", Background, "\x1b]11;rgb:0000/\x1b]11;rgb:0000/0000/0000\x07", true, false},
		{"an ESC that is no ST", "\x1b]11;rgb:0/0/0\x1bX", Background, "\x1b]11;rgb:0/0/0\x1bX", false, false},
		{"an 8-bit ST", "\x1b]11;rgb:0/0/0\x9c", Background, "\x1b]11;rgb:0/0/0\x9c", false, false},
		{"five hex digits", "\x1b]11;rgb:00000/0000/0000\x07", Background, "\x1b]11;rgb:00000/0000/0000\x07", false, false},
		{"a missing component", "\x1b]11;rgb:0000/0000\x07", Background, "\x1b]11;rgb:0000/0000\x07", false, false},
		{"an empty component", "\x1b]11;rgb:0000//0000\x07", Background, "\x1b]11;rgb:0000//0000\x07", false, false},
		{"junk before the terminator", "\x1b]11;rgb:0000/0000/0000junk\x07", Background, "\x1b]11;rgb:0000/0000/0000junk\x07", false, false},
		{"not hex", "\x1b]11;rgb:00g0/0000/0000\x07", Background, "\x1b]11;rgb:00g0/0000/0000\x07", false, false},
		{"another colour space", "\x1b]11;rgbi:1/1/1\x07", Background, "\x1b]11;rgbi:1/1/1\x07", false, false},
		{"a colour nobody can ask", "\x1b]13;rgb:0/0/0\x07", Background, "\x1b]13;rgb:0/0/0\x07", false, false},
		{"typing after a good answer", "\x1b]11;rgb:0000/0000/0000\x07rm -rf ~\r", Background, "\x1b]11;rgb:0000/0000/0000\x07rm -rf ~\r", true, false},
		{"typing before a good answer", "x\x1b[5;5R", Cursor, "x\x1b[5;5R", true, false},
		{"a 10 KiB colour", "\x1b]11;rgb:" + strings.Repeat("0", 10<<10) + "/0/0\x07", Background, "\x1b]11;rgb:" + strings.Repeat("0", 10<<10) + "/0/0\x07", false, false},
		{"a CPR of 200 digits", "\x1b[" + strings.Repeat("1", 200) + ";1R", Cursor, "\x1b[" + strings.Repeat("1", 200) + ";1R", false, false},
		{"a CPR of three numbers", "\x1b[5;5;5R", Cursor, "\x1b[5;5;5R", false, false},
		{"a CPR with a space", "\x1b[ 5;5R", Cursor, "\x1b[ 5;5R", false, false},
		{"a CPR with a NUL", "\x1b[5\x00;5R", Cursor, "\x1b[5\x00;5R", false, false},
		{"a CPR with a sign", "\x1b[-5;5R", Cursor, "\x1b[-5;5R", false, false},
		{"a CPR missing its column", "\x1b[5;R", Cursor, "\x1b[5;R", false, false},
		{"DA1 of 17 parameters", "\x1b[?" + strings.Repeat("1;", 16) + "1c", DA1, "\x1b[?" + strings.Repeat("1;", 16) + "1c", false, false},
		{"DA1 with a letter", "\x1b[?1;x;2c", DA1, "\x1b[?1;x;2c", false, false},
		{"DA1 with nothing in it", "\x1b[?c", DA1, "\x1b[?c", false, false},
		{"DA2 of four parameters", "\x1b[>0;276;0;1c", DA2, "\x1b[>0;276;0;1c", false, false},
		{"the status question, not its answer", "\x1b[5n", Status, "\x1b[5n", false, false},
		{"a lone ESC, then an answer", "\x1b\x1b[5;5R", Cursor, "\x1b\x1b[5;5R", true, false},
		{"an answer cut across frames: the first half", "\x1b]11;rgb:0000/00", Background, "\x1b]11;rgb:0000/00", false, false},
		{"an answer cut across frames: the second half", "00/0000\x07", Background, "00/0000\x07", false, false},
		{"a lying CPR, well-formed: a read-only one is dropped unsent", "\x1b[20;20R", Cursor, "\x1b[20;20R", true, true},
		{"two answers", "\x1b[?1;2c\x1b[20;20R", Cursor, "\x1b[20;20R", true, true},
		{"an answer nobody asked for", "\x1b[?1;2c", Cursor, "", false, true},
		{"an empty frame", "", Cursor, "", false, false},
	} {
		now := time.Now()
		var a Arbiter
		a.Attach(1, true)
		a.Live(1, 0)
		a.Asked(c.ask, 1, now)
		got := Filter([]byte(c.in), func(k Kind) bool { return a.FromViewer(1, k, now) })
		if string(got) != c.pass {
			t.Errorf("%s: a writable viewer's %q sent %q, want %q", c.name, c.in, got, c.pass)
		}
		if consumed := !a.Outstanding(c.ask, now); consumed != c.consumed {
			t.Errorf("%s: %q answered the question: %v, want %v", c.name, c.in, consumed, c.consumed)
		}
		if only := OnlyAnswers([]byte(c.in)); only != c.only {
			t.Errorf("%s: a read-only viewer's %q is only answers: %v, want %v", c.name, c.in, only, c.only)
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
		split(in, func(piece []byte, k Kind) {
			if len(piece) == 0 {
				t.Fatalf("an empty piece")
			}
			joined = append(joined, piece...)
			if k == None {
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
		split(in, func(piece []byte, k Kind) {
			for j := range piece {
				inAnswer[pos+j] = k != None
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
		passed := Filter(in, func(Kind) bool { return false })
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
		if all := Filter(in, func(Kind) bool { return true }); !bytes.Equal(all, in) {
			t.Fatalf("with every answer taken %q became %q", in, all)
		}
		n := 0
		for _, a := range answers {
			n += len(a)
		}
		if OnlyAnswers(in) != (len(in) > 0 && n == len(in)) {
			t.Fatalf("%q: OnlyAnswers disagrees with the pieces", in)
		}
	})
}
