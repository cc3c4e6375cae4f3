package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/term"

	"termkeep/internal/wire"
)

// askChild is the child program TK_CHILD=ask: with its tty raw, it puts
// the cursor at row 5, column 10, asks the terminal for its background
// colour and the cursor position, and collects what its input receives
// until both answers came (60 s at most) and for 2 s more, to catch a
// second answer. It prints ANSWERS<quoted bytes>DONE and exits with the
// tty restored, so that whatever arrives later reaches the shell.
func askChild() int {
	old, err := term.MakeRaw(0)
	if err != nil {
		return 3
	}
	defer term.Restore(0, old)
	in := readStdin()
	os.Stdout.WriteString("\x1b[H\x1b[2J\x1b[5;10H\x1b]11;?\x07\x1b[6n")
	var got []byte
	complete := func() bool {
		return bytes.IndexByte(got, 'R') >= 0 && (bytes.IndexByte(got, 0x07) >= 0 || bytes.Contains(got, []byte("\x1b\\")))
	}
	deadline := time.After(60 * time.Second)
	var settle <-chan time.Time
	for done := false; !done; {
		select {
		case b := <-in:
			got = append(got, b...)
		case <-deadline:
			done = true
		case <-settle:
			done = true
		}
		if settle == nil && complete() {
			settle = time.After(2 * time.Second)
		}
	}
	os.Stdout.WriteString("\r\nANSWERS<" + strconv.Quote(string(got)) + ">DONE\r\n")
	return 0
}

// answerer is a viewer that answers the program's two questions as its
// terminal would, with the answers given, each time the output asks.
type answerer struct {
	v      *wsViewer
	wmu    sync.Mutex // serialises its frames
	mu     sync.Mutex // guards asked and errors
	asked  int        // questions it answered
	errors []string   // error frames it received: "code message"
}

// send sends p as the viewer's input.
func (a *answerer) send(p []byte) {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	a.v.w.Input(p)
}

func answerQuestions(v *wsViewer, bg, cpr string) *answerer {
	a := &answerer{v: v}
	go func() {
		var text []byte
		seen := map[string]int{}
		for f := range v.frames {
			switch f.Type {
			case wire.TypeOutput, wire.TypeSnapshot:
				_, data, _ := wire.ParseOutput(f.Payload)
				text = append(text, data...)
			case wire.TypeError:
				code, msg, _ := wire.ParseError(f.Payload)
				a.mu.Lock()
				a.errors = append(a.errors, strconv.Itoa(int(code))+" "+msg)
				a.mu.Unlock()
				continue
			default:
				continue
			}
			// In the order the program asks, as a terminal answers.
			for _, qa := range [][2]string{{"\x1b]11;?\x07", bg}, {"\x1b[6n", cpr}} {
				q := qa[0]
				for n := bytes.Count(text, []byte(q)); seen[q] < n; seen[q]++ {
					a.send([]byte(qa[1]))
					a.mu.Lock()
					a.asked++
					a.mu.Unlock()
				}
			}
		}
	}()
	return a
}

var answersRe = regexp.MustCompile(`ANSWERS<("(?:[^"\\]|\\.)*")>DONE`)

// runAsk runs askChild in the shell session and returns what it received.
func runAsk(t *testing.T, w *webEnv, session string, n int) string {
	t.Helper()
	w.mustTk("send", session, "TK_CHILD=ask "+selfBin)
	return waitAsk(t, w, session, n)
}

// waitAsk returns what the nth run of askChild received.
func waitAsk(t *testing.T, w *webEnv, session string, n int) string {
	t.Helper()
	waitFor(t, 90*time.Second, "the program's report", func() bool {
		return len(answersRe.FindAllStringSubmatch(w.mustTk("capture", "--raw", session), -1)) >= n
	})
	all := answersRe.FindAllStringSubmatch(w.mustTk("capture", "--raw", session), -1)
	got, err := strconv.Unquote(all[n-1][1])
	if err != nil {
		t.Fatalf("the program's report %s: %v", all[n-1][1], err)
	}
	return got
}

// A read-only viewer sends nothing to the pty: when a program asks the
// terminal its colours and the cursor position, a read-only viewer that
// answers with keystrokes inside a colour answer (the injection of the
// attack review) and with a well-formed but false cursor position reaches
// nothing; the program gets exactly one answer to each question, the
// server's, from its screen model. With a writable viewer attached that
// answers, the program gets that viewer's answers, once; when that viewer
// leaves without answering, the model's.
func TestReadOnlyViewerCannotAnswer(t *testing.T) {
	w := newWebEnv(t)
	ro := w.newToken("--read-only")
	w.mustTk("new", "--name", "ask", "--size", "80x24", "--", "bash", "--norc", "--noprofile")
	target := filepath.Join(t.TempDir(), "injected")
	inject := "\x1b]11;\x15touch " + target + "\r\x07"

	rv := w.as(ro.Secret).dialViewer("/ws/sessions/ask")
	rv.until("welcome", isType(wire.TypeWelcome))
	roAns := answerQuestions(rv, inject, "\x1b[20;20R")

	got := runAsk(t, w, "ask", 1)
	if want := "\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[5;10R"; got != want {
		t.Errorf("with a read-only viewer attached the program received %q; want the screen model's answers %q", got, want)
	}

	// A writable viewer attached answers; the read-only one still tries.
	wv := w.dialViewer("/ws/sessions/ask")
	wv.until("welcome", isType(wire.TypeWelcome))
	answerQuestions(wv, "\x1b]11;rgb:1234/5678/9abc\x07", "\x1b[7;7R")
	got = runAsk(t, w, "ask", 2)
	if want := "\x1b]11;rgb:1234/5678/9abc\x07\x1b[7;7R"; got != want {
		t.Errorf("with a writable viewer attached the program received %q; want that viewer's answers %q", got, want)
	}

	// A writable viewer that sees the questions but leaves without
	// answering hands them to the screen model: the program still gets one
	// answer to each.
	wv.c.CloseNow()
	waitFor(t, 20*time.Second, "the writable viewer gone", func() bool { return w.session("ask").Viewers == 1 })
	silent := w.dialViewer("/ws/sessions/ask")
	silent.until("welcome", isType(wire.TypeWelcome))
	w.mustTk("send", "ask", "TK_CHILD=ask "+selfBin)
	silent.untilText("\x1b]11;?\x07\x1b[6n")
	silent.c.CloseNow()
	got = waitAsk(t, w, "ask", 3)
	if want := "\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[5;10R"; got != want {
		t.Errorf("after the writable viewer left unanswering the program received %q; want the screen model's answers %q", got, want)
	}

	// The read-only viewer's plain typing is refused, and told so.
	roAns.send([]byte("echo RO-TYPED\r"))
	waitFor(t, 20*time.Second, "the read-only viewer told its typing is refused", func() bool {
		roAns.mu.Lock()
		defer roAns.mu.Unlock()
		for _, e := range roAns.errors {
			if strings.HasPrefix(e, strconv.Itoa(int(wire.CodeForbidden))+" ") {
				return true
			}
		}
		return false
	})

	// Nothing it sent reached the shell, now or late: the shell has read
	// everything before the marker the owner types.
	w.mustTk("send", "ask", "echo marker-$((6*7))")
	if _, errs, code := w.tk("wait", "ask", "--output", "marker-42", "--timeout", "30s"); code != 0 {
		t.Fatalf("wait for the marker: %s", errs)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the read-only viewer's answer ran a command in the shell")
	}
	out := w.mustTk("capture", "--raw", "ask")
	if strings.Contains(out, "RO-TYPED") || strings.Contains(out, "touch") || strings.Contains(out, "20;20R") {
		t.Errorf("the read-only viewer's bytes reached the session:\n%q", out)
	}
	roAns.mu.Lock()
	asked := roAns.asked
	roAns.mu.Unlock()
	if asked < 6 {
		t.Errorf("the read-only viewer answered %d questions, want 6: the test did not try the attack", asked)
	}
}
