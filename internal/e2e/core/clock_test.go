package core

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/outlog/outlogtest"
	"termkeep/internal/sessiondir"
)

// The real server and CLI read a session's log written while the wall
// clock was set back 2 h, or forward a year, at line 200 of 400 (100 ms
// apart; written by outlog with a clock the test moves, in place of the
// holder's log): `capture --at` the time a line was written shows that
// line last, before and after the step, and the cast lasts 39.9 s with a
// marker at the step.
func TestCaptureAtSteppedClock(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	for _, tc := range outlogtest.Steps {
		t.Run(tc.Name, func(t *testing.T) {
			id := strings.TrimSpace(e.MustTk("new", "--", "true"))
			if _, errs, code := e.Tk("wait", id, "--exit", "--timeout", "20s"); code != 0 {
				t.Fatalf("wait --exit: %d %s", code, errs)
			}
			dir := filepath.Join(e.Dir, "sessions", id, sessiondir.LogDir)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			s := &outlogtest.Stepped{Start: time.Now().Add(-time.Minute).Truncate(time.Second), Lines: 400, Every: 100 * time.Millisecond, StepAt: 200, Step: tc.By}
			if err := outlogtest.WriteStepped(dir, s); err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{150, 199, 200, 300, 399} {
				out, errs, code := e.Tk("capture", id, "--at", s.Times[i].Format(time.RFC3339Nano))
				lines := strings.Fields(strings.ReplaceAll(strings.TrimSpace(out), "line ", "line_"))
				if want := fmt.Sprintf("line_%03d", i); code != 0 || len(lines) == 0 || lines[len(lines)-1] != want {
					t.Errorf("capture --at (line %d): exit %d %q, screen ends %q", i, code, strings.TrimSpace(errs), lines[max(len(lines)-1, 0):])
				}
			}
			cast := e.MustTk("export", id, "-f", "cast")
			sc := bufio.NewScanner(strings.NewReader(cast))
			sc.Scan() // the header
			var last float64
			var markers []string
			for sc.Scan() {
				var ev []any
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || len(ev) != 3 {
					t.Fatalf("cast event %q: %v", sc.Text(), err)
				}
				last, _ = ev[0].(float64)
				if ev[1] == "m" {
					markers = append(markers, fmt.Sprint(ev[2]))
				}
			}
			if last < 39.8 || last > 40 {
				t.Errorf("the cast lasts %.3fs, want 39.9s", last)
			}
			if len(markers) != 1 || markers[0] != tc.Label {
				t.Errorf("cast markers %q, want [%q]", markers, tc.Label)
			}
		})
	}
}
