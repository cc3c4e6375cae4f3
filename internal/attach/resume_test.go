package attach

import (
	"fmt"
	"strings"
	"testing"

	"termkeep/internal/wire"
)

// Where each connection starts, as a trace: "connect TOKEN => FROM CLAIM",
// "welcome VERSION => again|stay", "wrote OFF N", "snapshot OFF",
// "snapshot OFF => SKIPPED", "gap TO", "lane-end", "lost idle|lane",
// "redraw".
func TestResumeTraces(t *testing.T) {
	cases := []struct{ name, script string }{
		{"the first connection asks for a snapshot", `
			connect 1 => snap 0`},
		{"a lost connection with no lane resumes at its offset", `
			connect 1 => snap 0
			snapshot 100
			wrote 100 50
			lost idle
			connect 2 => 150 0`},
		{"a lost connection whose lane may have run claims it", `
			connect 1 => snap 0
			snapshot 100
			wrote 100 50
			lost lane
			connect 2 => 150 1
			welcome 10 => stay
			wrote 150 30
			lane-end
			wrote 180 5
			lost idle
			connect 3 => 185 0`},
		{"a claim unanswered when its connection is lost too stays", `
			connect 1 => snap 0
			snapshot 0
			lost lane
			connect 2 => 0 1
			lost lane
			connect 3 => 0 1
			lane-end
			lost lane
			connect 4 => 0 3`},
		{"a server that cannot answer a claim draws the screen anew", `
			connect 1 => snap 0
			snapshot 10
			lost lane
			connect 2 => 10 1
			welcome 9 => again
			connect 3 => snap 0
			welcome 9 => stay`},
		{"lost before the first snapshot: a snapshot again, no claim", `
			connect 1 => snap 0
			lost lane
			connect 2 => snap 0`},
		{"a redraw (alternate screen left, attach continued) drops a claim", `
			connect 1 => snap 0
			snapshot 10
			lost lane
			redraw
			connect 2 => snap 0`},
		{"a gap moves on past what the log lost", `
			connect 1 => snap 0
			snapshot 10
			gap 5000
			lost idle
			connect 2 => 5000 0`},
		{"a snapshot on a reconnect says what it skipped", `
			connect 1 => snap 0
			snapshot 100 => 0
			wrote 100 50
			lost idle
			connect 2 => 150 0
			snapshot 9000 => 8850`},
		{"a snapshot asked for, and its history, skip nothing; a resync after them does", `
			connect 1 => snap 0
			snapshot 100 => 0
			snapshot 130 => 0
			wrote 130 10
			snapshot 5000 => 4860
			redraw
			connect 2 => snap 0
			snapshot 6000 => 0`},
		{"hostile: a lane-end with no claim changes nothing", `
			connect 1 => snap 0
			snapshot 10
			lane-end
			lost idle
			connect 2 => 10 0`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newResume()
			for _, line := range strings.Split(strings.TrimSpace(c.script), "\n") {
				line = strings.TrimSpace(line)
				before, want, _ := strings.Cut(line, " => ")
				f := strings.Fields(before)
				var a, b uint64
				switch f[0] {
				case "connect":
					fmt.Sscan(f[1], &a)
					from, _, claim := r.connecting(a)
					got := fmt.Sprintf("%d %d", from, claim)
					if from == wire.FromSnapshot {
						got = fmt.Sprintf("snap %d", claim)
					}
					if got != want {
						t.Fatalf("%s: got %q", line, got)
					}
				case "welcome":
					fmt.Sscan(f[1], &a)
					got := "stay"
					if r.welcomed(int(a)) {
						got = "again"
					}
					if got != want {
						t.Fatalf("%s: got %q", line, got)
					}
				case "wrote":
					fmt.Sscan(f[1], &a)
					fmt.Sscan(f[2], &b)
					r.wrote(a, int(b))
				case "snapshot":
					fmt.Sscan(f[1], &a)
					if got := fmt.Sprint(r.snapshot(a)); want != "" && got != want {
						t.Fatalf("%s: skipped %s", line, got)
					}
				case "gap":
					fmt.Sscan(f[1], &a)
					r.gap(a)
				case "lane-end":
					r.laneEnded()
				case "lost":
					r.lost(f[1] == "idle")
				case "redraw":
					r.redraw()
				default:
					t.Fatalf("bad line %q", line)
				}
			}
		})
	}
}
