package security

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

	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// answerer is a viewer that answers the program's two questions as its
// terminal would, with the answers given, each time the output asks.
type answerer struct {
	v      *e2e.WSViewer
	wmu    sync.Mutex // serialises its frames
	mu     sync.Mutex // guards asked and errors
	asked  int        // questions it answered
	errors []string   // error frames it received: "code message"
}

// send sends p as the viewer's input.
func (a *answerer) send(p []byte) {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	a.v.W.Input(p)
}

func answerQuestions(v *e2e.WSViewer, bg, cpr string) *answerer {
	a := &answerer{v: v}
	go func() {
		var text []byte
		seen := map[string]int{}
		for f := range v.Frames {
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
func runAsk(t *testing.T, w *e2e.WebEnv, session string, n int) string {
	t.Helper()
	w.MustTk("send", session, "TK_CHILD=ask "+e2e.SelfBin)
	return waitAsk(t, w, session, n)
}

// waitAsk returns what the nth run of askChild received.
func waitAsk(t *testing.T, w *e2e.WebEnv, session string, n int) string {
	t.Helper()
	e2e.WaitFor(t, 90*time.Second, "the program's report", func() bool {
		return len(answersRe.FindAllStringSubmatch(w.MustTk("capture", "--raw", session), -1)) >= n
	})
	all := answersRe.FindAllStringSubmatch(w.MustTk("capture", "--raw", session), -1)
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
	e2e.SkipShort(t)
	w := e2e.NewWebEnv(t)
	ro := w.NewToken("--read-only")
	w.MustTk("new", "--name", "ask", "--size", "80x24", "--", "bash", "--norc", "--noprofile")
	target := filepath.Join(t.TempDir(), "injected")
	inject := "\x1b]11;\x15touch " + target + "\r\x07"

	rv := w.As(ro.Secret).DialViewer("/ws/sessions/ask")
	rv.Until("welcome", e2e.IsType(wire.TypeWelcome))
	roAns := answerQuestions(rv, inject, "\x1b[20;20R")

	got := runAsk(t, w, "ask", 1)
	if want := "\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[5;10R"; got != want {
		t.Errorf("with a read-only viewer attached the program received %q; want the screen model's answers %q", got, want)
	}

	// A writable viewer attached answers; the read-only one still tries.
	wv := w.DialViewer("/ws/sessions/ask")
	wv.Until("welcome", e2e.IsType(wire.TypeWelcome))
	answerQuestions(wv, "\x1b]11;rgb:1234/5678/9abc\x07", "\x1b[7;7R")
	got = runAsk(t, w, "ask", 2)
	if want := "\x1b]11;rgb:1234/5678/9abc\x07\x1b[7;7R"; got != want {
		t.Errorf("with a writable viewer attached the program received %q; want that viewer's answers %q", got, want)
	}

	// A writable viewer that sees the questions but leaves without
	// answering hands them to the screen model: the program still gets one
	// answer to each.
	wv.C.CloseNow()
	e2e.WaitFor(t, 20*time.Second, "the writable viewer gone", func() bool { return w.Session("ask").Viewers == 1 })
	silent := w.DialViewer("/ws/sessions/ask")
	silent.Until("welcome", e2e.IsType(wire.TypeWelcome))
	w.MustTk("send", "ask", "TK_CHILD=ask "+e2e.SelfBin)
	silent.UntilText("\x1b]11;?\x07\x1b[6n")
	silent.C.CloseNow()
	got = waitAsk(t, w, "ask", 3)
	if want := "\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[5;10R"; got != want {
		t.Errorf("after the writable viewer left unanswering the program received %q; want the screen model's answers %q", got, want)
	}

	// The read-only viewer's plain typing is refused, and told so.
	roAns.send([]byte("echo RO-TYPED\r"))
	e2e.WaitFor(t, 20*time.Second, "the read-only viewer told its typing is refused", func() bool {
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
	w.MustTk("send", "ask", "echo marker-$((6*7))")
	if _, errs, code := w.Tk("wait", "ask", "--from", "start", "--output", "marker-42", "--timeout", "30s"); code != 0 {
		t.Fatalf("wait for the marker: %s", errs)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the read-only viewer's answer ran a command in the shell")
	}
	out := w.MustTk("capture", "--raw", "ask")
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
