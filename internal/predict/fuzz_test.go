package predict

import (
	"testing"
	"time"
)

// FuzzPredictor drives a Predictor with keys, output, ticks and mode
// changes in any order (each byte pair: what happens, and how far the
// clock moves) and checks what must always hold: no panic, no more than
// MaxPending predictions, predicted cells on the screen and never in its
// last column, and counts that add up.
func FuzzPredictor(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 8, 150, 9, 0, 1, 3, 12, 200})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 10, 8, 255, 10, 1})
	f.Add([]byte{2, 5, 4, 1, 11, 0, 6, 7, 13, 9, 14, 0, 15, 3})
	keys := []string{"a", "\x7f", "\x1b[D", "\x1b[C", "\x1bOD", "", "\x00", "\x1b", "é", "\r", " ", "\x1b[200~x\x1b[201~", "\x15", "漢"}
	outs := []string{"a", "x", "\b", "\b \b", "\r\n", "\x1b[K", "\x1b[H", "$ ", "\x1b[3C"}
	f.Fuzz(func(t *testing.T, ops []byte) {
		tm := newTerm(12).write("$ ")
		p := New(Options{Setting: Always})
		p.SetRTT(150 * time.Millisecond)
		p.SetModes(Modes{TermMode: &TermMode{}, Shell: ShellPrompt})
		now := epoch
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], int(ops[i+1])
			now = now.Add(time.Duration(arg) * time.Millisecond)
			switch op % 16 {
			case 0, 1, 2, 3, 4, 5, 6, 7:
				p.Key(keys[(int(op)/16+arg)%len(keys)], now, tm)
			case 8, 9, 10:
				p.Screen(now, tm.write(outs[arg%len(outs)]))
			case 11:
				p.Tick(now)
			case 12:
				if d, ok := p.Deadline(); ok {
					p.Tick(d)
					now = later(now, d)
				}
			case 13:
				p.SetModes(Modes{TermMode: &TermMode{Echo: arg&1 != 0, Canonical: arg&2 != 0}, Shell: Shell(arg / 4 % 3), AltScreen: arg&64 != 0})
			case 14:
				p.SetRTT(time.Duration(arg) * time.Millisecond)
			case 15:
				p.Prompt()
			}
			if p.Pending() > MaxPending {
				t.Fatalf("%d predictions pending", p.Pending())
			}
			for _, c := range p.View().Cells {
				if c.Col < 0 || c.Col >= tm.cols-1 || c.Row < 0 {
					t.Fatalf("a predicted cell at %d,%d on a screen of %d columns", c.Row, c.Col, tm.cols)
				}
			}
			if s := p.Stats; s.Confirmed+s.Wrong+s.Late > s.Shown || s.Shown > s.Keys {
				t.Fatalf("counts %+v", s)
			}
		}
	})
}
