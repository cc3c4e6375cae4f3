package termq

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The arbiter's decisions as traces: each script is a run of steps, one a
// line, and a step that decides something names the decision after "->".
//
//	attach ID rw|ro        a viewer arrives, writable or read-only
//	live ID OFF            its output starts at OFF
//	leave ID -> Q...|none  it leaves; the questions handed to the model
//	skip ID HAD AT -> Q...|none  sent the output below HAD, it is skipped
//	                       to AT; the questions handed to the model
//	ask KIND END -> WHO    the output asks; who is to answer (viewer, model, nobody)
//	flood N KIND -> COUNTS N questions of KIND at offsets 1000, 1001, ...
//	answer ID KIND -> forward|drop   a viewer's well-formed answer
//	input ID "BYTES" -> "BYTES"      a viewer's input frame; what reaches the pty
//	model KIND -> forward|drop       the model's answer
//	outstanding KIND -> yes|no
//	tick DURATION          the clock moves on
func TestArbiterTraces(t *testing.T) {
	for _, c := range []struct{ name, script string }{
		{"only read-only viewers: the model answers, once", `
			attach 1 ro
			live 1 0
			ask bg 10 -> model
			answer 1 bg -> drop
			model bg -> forward
			model bg -> drop`},
		{"a writable viewer sees the question: it answers, the model does not", `
			attach 1 rw
			live 1 0
			ask cursor 10 -> viewer
			answer 1 cursor -> forward
			model cursor -> drop
			leave 1 -> none`},
		{"two viewers answer the same question: the first passes", `
			attach 1 rw
			attach 2 rw
			live 1 0
			live 2 5
			ask cursor 10 -> viewer
			input 2 "\x1b[5;7R" -> "\x1b[5;7R"
			input 1 "\x1b[9;9R" -> ""
			model cursor -> drop`},
		{"two questions of a kind, three answers: two pass, in order", `
			attach 1 rw
			attach 2 rw
			live 1 0
			live 2 0
			ask da1 10 -> viewer
			ask da1 20 -> viewer
			input 1 "\x1b[?1;2c" -> "\x1b[?1;2c"
			input 2 "\x1b[?1;2c" -> "\x1b[?1;2c"
			input 2 "\x1b[?1;2c" -> ""`},
		{"a writable viewer arrives while the model answers: one answer passes", `
			ask bg 10 -> model
			attach 1 rw
			live 1 10
			answer 1 bg -> forward
			model bg -> drop`},
		{"a writable viewer leaves with questions outstanding: the model answers them", `
			attach 1 rw
			live 1 0
			ask bg 10 -> viewer
			ask cursor 20 -> viewer
			leave 1 -> bg@10 cursor@20
			leave 1 -> none
			model bg -> forward
			model cursor -> forward
			answer 1 cursor -> drop`},
		{"another writable viewer that saw the question stays: it answers", `
			attach 1 rw
			live 1 0
			attach 2 rw
			live 2 5
			ask da1 10 -> viewer
			leave 1 -> none
			answer 2 da1 -> forward`},
		{"the writable viewer left came after the question: the model answers it", `
			attach 1 rw
			live 1 0
			attach 2 rw
			ask da1 10 -> viewer
			live 2 20
			ask da2 30 -> viewer
			leave 1 -> da1@10
			model da1 -> forward
			answer 2 da2 -> forward`},
		{"a viewer still being welcomed does not count", `
			attach 1 rw
			ask da1 10 -> model
			live 1 5
			ask da2 20 -> viewer`},
		{"a viewer whose output starts at the question's end does not see it", `
			attach 1 rw
			live 1 10
			ask da1 10 -> model
			ask da2 11 -> viewer`},
		{"a read-only viewer leaving hands nothing over", `
			attach 1 rw
			live 1 0
			attach 2 ro
			live 2 0
			ask bg 10 -> viewer
			leave 2 -> none
			outstanding bg -> yes`},
		{"a read-only viewer answers, well-formed and false: nothing passes, the question stays", `
			attach 1 ro
			live 1 0
			ask cursor 10 -> model
			input 1 "\x1b[20;20R" -> ""
			answer 1 cursor -> drop
			outstanding cursor -> yes
			model cursor -> forward`},
		{"a viewer that lies: answers nobody asked for are dropped, a false one is its typing", `
			attach 1 rw
			live 1 0
			ask cursor 10 -> viewer
			input 1 "\x1b[?1;2c\x1b]11;rgb:0/0/0\x07" -> ""
			outstanding cursor -> yes
			input 1 "ls\x1b]11;\x15touch /tmp/x\r\x07" -> "ls\x1b]11;\x15touch /tmp/x\r\x07"
			outstanding cursor -> yes
			input 1 "\x1b[99;99R" -> "\x1b[99;99R"
			input 1 "\x1b[5;5R" -> ""
			model cursor -> drop`},
		{"a viewer nobody attached answers: dropped", `
			attach 1 rw
			live 1 0
			ask status 10 -> viewer
			answer 7 status -> drop
			answer 1 status -> forward`},
		{"an answer after the TTL is dropped, and the model's too", `
			attach 1 rw
			live 1 0
			ask bg 10 -> viewer
			tick 5s
			outstanding bg -> yes
			tick 1ms
			answer 1 bg -> drop
			model bg -> drop`},
		{"an expired question is handed to nobody when its viewer leaves", `
			attach 1 rw
			live 1 0
			ask bg 10 -> viewer
			tick 6s
			ask fg 20 -> viewer
			leave 1 -> fg@20`},
		{"a writable viewer skipped past a question: the model answers it, the viewer what it was sent", `
			attach 1 rw
			live 1 0
			ask bg 10 -> viewer
			ask cursor 20 -> viewer
			skip 1 15 30 -> cursor@20
			model cursor -> forward
			answer 1 bg -> forward
			ask da1 40 -> viewer`},
		{"a skipped viewer's question that another writable viewer sees: that one answers", `
			attach 1 rw
			live 1 0
			attach 2 rw
			live 2 0
			ask da1 10 -> viewer
			skip 1 5 20 -> none
			answer 2 da1 -> forward`},
		{"skipped twice: a question goes to the model once", `
			attach 1 rw
			live 1 0
			ask status 10 -> viewer
			skip 1 5 20 -> status@10
			skip 1 20 30 -> none
			leave 1 -> none
			model status -> forward`},
		{"a skip that leaves the viewer behind where it was moves nothing back", `
			attach 1 rw
			live 1 50
			skip 1 50 40 -> none
			ask da2 45 -> model`},
		{"a read-only viewer's skip, or one not yet live, hands nothing over", `
			attach 1 ro
			live 1 0
			attach 2 rw
			ask bg 10 -> model
			skip 1 5 20 -> none
			skip 2 5 20 -> none
			model bg -> forward`},
		{"an expired question is handed to nobody when its viewer is skipped", `
			attach 1 rw
			live 1 0
			ask bg 10 -> viewer
			tick 6s
			skip 1 5 20 -> none`},
		{"a flood of questions: past MaxPending they go unanswered, until room is made", `
			attach 1 rw
			live 1 0
			flood 64 da1 -> viewer=64
			ask bg 2000 -> nobody
			answer 1 bg -> drop
			answer 1 da1 -> forward
			ask bg 2001 -> viewer
			ask bg 2002 -> nobody
			tick 6s
			ask bg 3000 -> viewer
			outstanding da1 -> no`},
		{"a flood with no writable viewer: the model is handed only MaxPending", `
			attach 1 ro
			live 1 0
			flood 70 status -> model=64 nobody=6`},
	} {
		t.Run(c.name, func(t *testing.T) { runArbiterScript(t, c.script) })
	}
}

func runArbiterScript(t *testing.T, script string) {
	t.Helper()
	var a Arbiter
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for n, line := range strings.Split(strings.TrimSpace(script), "\n") {
		line = strings.TrimSpace(line)
		step, want, decides := strings.Cut(line, " -> ")
		f := strings.Fields(step)
		kind := func(i int) Kind {
			for k := None; k <= CursorColor; k++ {
				if k.String() == f[i] {
					return k
				}
			}
			t.Fatalf("line %d: no kind %q", n+1, f[i])
			return None
		}
		num := func(i int) int {
			v, err := strconv.Atoi(f[i])
			if err != nil {
				t.Fatalf("line %d: %v", n+1, err)
			}
			return v
		}
		var got string
		switch f[0] {
		case "attach":
			a.Attach(num(1), f[2] == "rw")
		case "live":
			a.Live(num(1), uint64(num(2)))
		case "leave":
			got = "none"
			if qs := a.Leave(num(1), now); len(qs) > 0 {
				got = strings.Trim(fmt.Sprint(qs), "[]")
			}
		case "skip":
			got = "none"
			if qs := a.Skip(num(1), uint64(num(2)), uint64(num(3)), now); len(qs) > 0 {
				got = strings.Trim(fmt.Sprint(qs), "[]")
			}
		case "ask":
			got = a.Asked(kind(1), uint64(num(2)), now).String()
		case "flood":
			counts := map[Who]int{}
			for i := range num(1) {
				counts[a.Asked(kind(2), uint64(1000+i), now)]++
			}
			var parts []string
			for _, w := range []Who{Viewer, Model, Nobody} {
				if counts[w] > 0 {
					parts = append(parts, fmt.Sprintf("%s=%d", w, counts[w]))
				}
			}
			got = strings.Join(parts, " ")
		case "answer":
			got = verdict(a.FromViewer(num(1), kind(2), now))
		case "model":
			got = verdict(a.FromModel(kind(1), now))
		case "input":
			in, err := strconv.Unquote(strings.TrimSpace(strings.TrimPrefix(step, "input "+f[1])))
			if err != nil {
				t.Fatalf("line %d: %v", n+1, err)
			}
			id := num(1)
			got = strconv.Quote(string(Filter([]byte(in), func(k Kind) bool { return a.FromViewer(id, k, now) })))
			if w, err := strconv.Unquote(want); err == nil {
				want = strconv.Quote(w)
			}
		case "outstanding":
			got = "no"
			if a.Outstanding(kind(1), now) {
				got = "yes"
			}
		case "tick":
			d, err := time.ParseDuration(f[1])
			if err != nil {
				t.Fatalf("line %d: %v", n+1, err)
			}
			now = now.Add(d)
		default:
			t.Fatalf("line %d: no step %q", n+1, f[0])
		}
		if decides != (got != "") {
			t.Fatalf("line %d %q: decided %q; the script expects a decision: %v", n+1, line, got, decides)
		}
		if got != want {
			t.Errorf("line %d: %s -> %s, want %s", n+1, step, got, want)
		}
	}
}

func verdict(forward bool) string {
	if forward {
		return "forward"
	}
	return "drop"
}

// What the model answers, for each kind a program can ask.
func TestReply(t *testing.T) {
	for _, c := range []struct {
		k    Kind
		x, y int
		want string
	}{
		{DA1, 0, 0, "\x1b[?1;2c"},
		{DA2, 0, 0, "\x1b[>0;276;0c"},
		{Status, 0, 0, "\x1b[0n"},
		{Cursor, 9, 4, "\x1b[5;10R"},
		{Foreground, 0, 0, "\x1b]10;rgb:ffff/ffff/ffff\x1b\\"},
		{Background, 0, 0, "\x1b]11;rgb:0000/0000/0000\x1b\\"},
		{CursorColor, 0, 0, "\x1b]12;rgb:ffff/ffff/ffff\x1b\\"},
		{None, 0, 0, ""},
	} {
		got := Reply(c.k, c.x, c.y)
		if string(got) != c.want {
			t.Errorf("%s: %q, want %q", c.k, got, c.want)
		}
		// Every reply is an answer the grammar accepts, whole, to its kind.
		if k, n := parseAnswer(got); c.k != None && (k != c.k || n != len(got)) {
			t.Errorf("%s: the reply %q parses as %s of %d bytes", c.k, got, k, n)
		}
	}
}
