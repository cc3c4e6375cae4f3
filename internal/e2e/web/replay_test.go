package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/e2e"
	"termkeep/internal/replay"
	"termkeep/internal/wire"
)

// replayScript prints a step, then waits for the test's go file before the
// next: lines, a full-screen drawing with a title, scrolling, a size
// change. The test captures the screen between steps.
const replayScript = `
step() { printf 'STEP%s\n' "$1"; while [ ! -e "$GO/go$1" ]; do sleep 0.05; done; }
printf 'first line\n'; sleep 0.1; printf 'second \033[1;31mred\033[m line\n'
step 1
printf '\033[?1049h\033]2;drawing\007\033[H\033[2J'
for i in 1 2 3 4 5; do printf '\033[%d;%dH\033[4%dm box %d \033[m' $((i*3)) $((i*5)) $i $i; done
printf '\033[20;1H'
step 2
printf '\033[?1049l'
i=0; while [ $i -lt 40 ]; do printf 'scroll %d\n' $i; i=$((i+1)); done
step 3
printf 'after the resize\n'
step 4
printf 'bye\n'
`

// moment is what capture showed at a time during the recording.
type moment struct {
	at     time.Time
	screen string
}

// The screen at a time T, replayed after the session ended, is what
// capture showed at T while it ran; seeking by offset gives the same
// screens; the replayed output is the log's bytes; the timeline covers
// the log.
func TestReplaySeekEqualsCapture(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	w := e2e.NewWebEnv(t)
	e := w.Env
	goDir := t.TempDir()
	id := strings.TrimSpace(e.MustTk("new", "--name", "rp", "--env", "GO="+goDir, "--", "sh", "-c", replayScript))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var moments []moment
	for step := 1; step <= 4; step++ {
		if step == 3 {
			// The size changes after the output: its Size record is at the
			// offset the moment is at, in force there. (The log does not
			// say when it changed, so a moment between the last output and
			// the change would be drawn at the new size too.)
			e2e.WaitFor(t, 20*time.Second, "STEP3", func() bool {
				s, err := e.C.Screen(ctx, id, false, 0)
				return err == nil && strings.Contains(s, "STEP3")
			})
			resizeTo(t, e, id, 100, 30)
		}
		moments = append(moments, captureAfter(t, e, id, fmt.Sprintf("STEP%d", step)))
		// The next output comes well after the moment: the log's Time
		// records (every 100 ms) tell them apart.
		time.Sleep(300 * time.Millisecond)
		os.WriteFile(filepath.Join(goDir, fmt.Sprintf("go%d", step)), nil, 0o600)
	}
	if _, errs, code := e.Tk("wait", id, "--exit", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait --exit: %d %s", code, errs)
	}
	final := captureAfter(t, e, id, "bye")
	// The screen model wrote a replay checkpoint at the end, which the
	// screen at the end is rendered from.
	end := e.Session(id).End
	e2e.WaitFor(t, 10*time.Second, "a replay checkpoint at the end", func() bool {
		offs, _ := replay.Checkpoints(filepath.Join(e.Dir, "sessions", id))
		return len(offs) > 0 && offs[len(offs)-1] == end
	})

	for i, m := range moments {
		got, err := e.C.ReplayScreen(ctx, id, "t"+strconv.FormatInt(m.at.UnixMilli(), 10), "text", 0)
		if err != nil {
			t.Fatalf("moment %d: %v", i, err)
		}
		if string(got.Body) != m.screen {
			t.Fatalf("moment %d (%s): the replayed screen differs from the capture:\n%s\nwant:\n%s", i, m.at.Format(time.StampMilli), got.Body, m.screen)
		}
		if got.Time.UnixMilli() != m.at.UnixMilli() {
			t.Errorf("moment %d: Termkeep-Time %v, want %v", i, got.Time, m.at)
		}
		// The same screen by its offset, and by the CLI with an RFC 3339 time.
		byOff, err := e.C.ReplayScreen(ctx, id, strconv.FormatUint(got.Offset, 10), "text", 0)
		if err != nil || string(byOff.Body) != m.screen || byOff.Offset != got.Offset {
			t.Fatalf("moment %d at offset %d: %v\n%s", i, got.Offset, err, byOff.Body)
		}
		if out := e.MustTk("capture", id, "--at", m.at.Format(time.RFC3339Nano)); out != m.screen {
			t.Fatalf("moment %d: capture --at printed:\n%s\nwant:\n%s", i, out, m.screen)
		}
	}
	if got, err := e.C.ReplayScreen(ctx, id, "", "text", 0); err != nil || string(got.Body) != final.screen {
		t.Fatalf("the screen at the end (%v):\n%s\nwant:\n%s", err, got.Body, final.screen)
	}
	if got, err := e.C.ReplayScreen(ctx, id, "0", "text", 0); err != nil || strings.TrimSpace(string(got.Body)) != "" || got.Cols != 80 {
		t.Fatalf("the screen at offset 0 (%v, %dx%d):\n%s", err, got.Cols, got.Rows, got.Body)
	}
	var ce *client.Error
	if _, err := e.C.ReplayScreen(ctx, id, strconv.FormatUint(end+1, 10), "text", 0); !errors.As(err, &ce) || ce.Status != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("past the end: %v, want 416", err)
	}

	checkReplayOutput(t, e, id)

	// The timeline over the gateway, with a read-only token: the log's
	// range, points from its start to its end, no markers without shell
	// integration.
	ro := w.NewToken("--read-only")
	var tl api.ReplayTimeline
	w.As(ro.Secret).API("GET", "/api/sessions/rp/replay", nil, http.StatusOK, &tl)
	if tl.ID != id || tl.State != "exited" || tl.First != 0 || tl.End != end || tl.Cols != 80 || tl.Rows != 24 || len(tl.Markers) != 0 {
		t.Fatalf("timeline %+v", tl)
	}
	if n := len(tl.Points); n < 2 || tl.Points[0].Offset != 0 || tl.Points[0].T != tl.StartT || tl.Points[n-1].T > tl.EndT {
		t.Fatalf("points %v (start %d, end %d)", tl.Points, tl.StartT, tl.EndT)
	}
	if tl.StartT > moments[0].at.UnixMilli() || tl.EndT < moments[len(moments)-1].at.UnixMilli() {
		t.Fatalf("the timeline %d-%d does not span the moments", tl.StartT, tl.EndT)
	}
	// The snapshot form, as the browser asks for it.
	code, body := w.Do("GET", "/api/sessions/rp/replay/screen?at=t"+strconv.FormatInt(moments[1].at.UnixMilli(), 10)+"&scrollback=1000", e2e.Bearer(ro.Secret), nil)
	if code != http.StatusOK || !bytes.Contains(body, []byte("box 3")) || !bytes.Contains(body, []byte("\x1b]2;drawing")) {
		t.Fatalf("snapshot: %d %q", code, body)
	}
}

// captureAfter waits for text on the session's screen, lets the output
// settle, and captures the screen; the moment is right after the capture
// returned (the next output comes later).
func captureAfter(t *testing.T, e *e2e.Env, id, text string) moment {
	t.Helper()
	ctx := context.Background()
	e2e.WaitFor(t, 20*time.Second, text+" on the screen", func() bool {
		s, err := e.C.Screen(ctx, id, false, 0)
		return err == nil && strings.Contains(s, text)
	})
	time.Sleep(150 * time.Millisecond)
	s, err := e.C.Screen(ctx, id, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	return moment{at: time.Now(), screen: s}
}

// resizeTo makes the session cols x rows: a viewer of that size attaches.
func resizeTo(t *testing.T, e *e2e.Env, id string, cols, rows uint16) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := e.C.Attach(ctx, id, wire.Hello{Role: wire.RoleViewer, From: -1, Cols: cols, Rows: rows, Fit: true})
	if err != nil {
		t.Fatal(err)
	}
	e2e.WaitFor(t, 10*time.Second, "the new size", func() bool {
		got := e.Session(id)
		return got.Cols == int(cols) && got.Rows == int(rows)
	})
	// Gone before the next one comes: a viewer still there when the next
	// leaves would take the size back (the size passes to the writable
	// viewer left).
	s.Close()
	e2e.WaitFor(t, 10*time.Second, "the resizing viewer gone", func() bool { return e.Session(id).Viewers == 0 })
}

// checkReplayOutput reads the session's output through replay/output in
// small answers and compares it with /output's bytes.
func checkReplayOutput(t *testing.T, e *e2e.Env, id string) {
	t.Helper()
	ctx := context.Background()
	out, err := e.C.Output(ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(out)
	out.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	var sizes []string
	from, answers := uint64(0), 0
	for done := false; !done; answers++ {
		var next uint64
		next, done, err = e.C.ReplayOutput(ctx, id, from, 512, func(st api.ReplayStep) error {
			switch {
			case st.Cols > 0:
				sizes = append(sizes, fmt.Sprintf("%dx%d", st.Cols, st.Rows))
			case st.Data != nil:
				if *st.Offset != uint64(got.Len()) || st.T == nil {
					return fmt.Errorf("a chunk at %d (time %v) where the stream is at %d", *st.Offset, st.T, got.Len())
				}
				got.Write(st.Data)
			case st.End != nil:
				return fmt.Errorf("a gap at %d", *st.Offset)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if next < from || answers > 1000 {
			t.Fatalf("replay output from %d goes on at %d", from, next)
		}
		from = next
	}
	if !bytes.Equal(got.Bytes(), raw) {
		t.Fatalf("replay output carries %d bytes, /output %d", got.Len(), len(raw))
	}
	if answers < 2 || sizes[0] != "80x24" || sizes[len(sizes)-1] != "100x30" {
		t.Fatalf("%d answers, sizes %v", answers, sizes)
	}
}

// With shell integration, a command's start and end are markers on the
// timeline: its command line, and a failed command's status. Search
// finds a line over the gateway.
func TestReplayTimelineMarkers(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	w := e2e.NewWebEnv(t)
	e := w.Env
	args := append([]string{"new", "--name", "sh"}, e2e.ShellEnv(t)...)
	id := strings.TrimSpace(e.MustTk(append(args, "--", "bash")...))
	// Typed before bash draws its prompt, the line would be echoed twice
	// (by the terminal, then by readline) and found twice by grep.
	e2e.WaitFor(t, 20*time.Second, "bash's first prompt", func() bool {
		s, err := e.C.Get(context.Background(), id)
		return err == nil && s.Activity != nil && s.Activity.State == "at_prompt"
	})
	e.MustTk("send", id, "echo replay-$((6*7))")
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "replay-42", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	e.MustTk("send", id, "false")
	var tl api.ReplayTimeline
	e2e.WaitFor(t, 20*time.Second, "four markers", func() bool {
		var err error
		tl, err = e.C.Timeline(context.Background(), id)
		return err == nil && len(tl.Markers) >= 4
	})
	var got []string
	for _, m := range tl.Markers {
		s := m.Kind
		if m.Label != nil && *m.Label != "" {
			s += " " + *m.Label
		}
		if m.Status != nil {
			s += fmt.Sprintf(" %d", *m.Status)
		}
		got = append(got, s)
	}
	if want := "command echo replay-$((6*7)), done 0, command false, done 1"; strings.Join(got, ", ") != want {
		t.Fatalf("markers %q, want %q", strings.Join(got, ", "), want)
	}
	// The screen at the failed command's end ends with its command line:
	// no prompt after it yet.
	done := tl.Markers[3]
	s, err := e.C.ReplayScreen(context.Background(), id, strconv.FormatUint(done.Offset, 10), "text", 0)
	if text := strings.TrimRight(string(s.Body), "\n"); err != nil || !strings.HasSuffix(text, " false") {
		t.Fatalf("the screen at the done marker (%v):\n%s", err, s.Body)
	}

	// Search over the gateway: a plain string (not a regexp), with times;
	// at most limit hits.
	hits := webGrep(t, w, "sh", url.Values{"pattern": {"replay-$((6*7))"}, "literal": {"1"}})
	if len(hits) != 1 || !strings.HasSuffix(hits[0].Line, "echo replay-$((6*7))") || hits[0].T == nil ||
		hits[0].Time == nil || *hits[0].T != hits[0].Time.UnixMilli() {
		t.Fatalf("grep hits %+v", hits)
	}
	if hits := webGrep(t, w, "sh", url.Values{"pattern": {"replay"}, "limit": {"1"}}); len(hits) != 1 {
		t.Fatalf("grep with limit=1: %+v", hits)
	}
	e.MustTk("kill", id)
}

// webGrep searches a session over the gateway.
func webGrep(t *testing.T, w *e2e.WebEnv, ref string, q url.Values) []api.GrepHit {
	t.Helper()
	code, body := w.Do("GET", "/api/sessions/"+ref+"/grep?"+q.Encode(), e2e.Bearer(w.Token), nil)
	if code != http.StatusOK {
		t.Fatalf("grep %v: %d %s", q, code, body)
	}
	var hits []api.GrepHit
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		var h api.GrepHit
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			t.Fatal(err)
		}
		hits = append(hits, h)
	}
	return hits
}
