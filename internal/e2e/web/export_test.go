package web

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
)

// castEvents parses an asciicast v2 file: its header, and its events in
// order (time, type, data).
func castEvents(t *testing.T, s string) (map[string]any, [][3]any) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 16<<20)
	var hdr map[string]any
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &hdr) != nil || hdr["version"] != 2.0 {
		t.Fatalf("not an asciicast v2 file:\n%s", s)
	}
	var evs [][3]any
	last := 0.0
	for sc.Scan() {
		var ev [3]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("cast event %q: %v", sc.Text(), err)
		}
		at, _ := ev[0].(float64)
		if at < last {
			t.Fatalf("cast event at %f after %f", at, last)
		}
		last = at
		evs = append(evs, ev)
	}
	return hdr, evs
}

// castText is the output the events carry.
func castText(evs [][3]any) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev[1] == "o" {
			b.WriteString(ev[2].(string))
		}
	}
	return b.String()
}

// A session that printed with pauses, exported as a recording: each line at
// its time, the data the log's bytes, and asciinema (when installed) reads
// it back.
func TestExportCast(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	// The holder reads the pty once meta.json is written (and fsynced): a
	// first line printed before then is logged, and stamped (Time records
	// come every 100 ms), when the reading starts. The child waits it out,
	// long enough for an fsync on a machine busy with other tests (0.5 s
	// was not: one stamped 0.38 s late).
	// Each line carries the child's own clock: on a busy machine a sleep
	// of 1 s may take longer, and the recording must show when the line
	// was printed, not when it was meant to be.
	e.MustTk("new", "--name", "rec", "--", "sh", "-c",
		"sleep 1.5; echo one@$(date +%s%N); sleep 1; echo two@$(date +%s%N); sleep 1; echo three@$(date +%s%N)")
	if _, errs, code := e.Tk("wait", "rec", "--exit", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
	out := e.MustTk("export", "rec", "--format", "cast")
	hdr, evs := castEvents(t, out)
	if hdr["title"] != "rec" || hdr["width"] != 80.0 || hdr["height"] != 24.0 {
		t.Fatalf("header %v", hdr)
	}
	at := map[string]float64{}    // in the recording
	child := map[string]float64{} // by the child's clock
	stamp := regexp.MustCompile(`(one|two|three)@(\d+)`)
	for _, ev := range evs {
		if ev[1] != "o" {
			continue
		}
		for _, m := range stamp.FindAllStringSubmatch(ev[2].(string), -1) {
			if _, seen := at[m[1]]; !seen {
				ns, _ := strconv.ParseInt(m[2], 10, 64)
				at[m[1]], child[m[1]] = ev[0].(float64), float64(ns)/1e9
			}
		}
	}
	if len(at) != 3 {
		t.Fatalf("events %v", evs)
	}
	t.Logf("one at %.3fs, two at %.3fs, three at %.3fs", at["one"], at["two"], at["three"])
	for _, w := range []string{"two", "three"} {
		d, want := at[w]-at["one"], child[w]-child["one"]
		if math.Abs(d-want) > 0.25 {
			t.Errorf("%s is %.3fs after one, want %.3fs (the child's clock) ±250ms (events %v)", w, d, want, evs)
		}
	}
	raw := e.MustTk("capture", "--raw", "rec")
	if got := castText(evs); got != string([]rune(raw)) {
		t.Errorf("cast data %q, want the log's %q", got, raw)
	}

	asciinema, err := exec.LookPath("asciinema")
	if err != nil {
		t.Log("asciinema is not installed: not checking that it reads the recording")
		return
	}
	file := filepath.Join(t.TempDir(), "rec.cast")
	e.MustTk("export", "rec", "-o", file)
	got := catCast(t, asciinema, file)
	if got != raw {
		t.Errorf("asciinema cat prints %q, want %q", got, raw)
	}
}

// catCast runs `asciinema cat FILE`, which wants a terminal, in a pty in
// raw mode (so the bytes come through unchanged), and returns what it
// printed.
func catCast(t *testing.T, asciinema, file string) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	cmd := exec.Command(asciinema, "cat", file)
	cmd.Env = append(os.Environ(), "LANG=C.UTF-8")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	out, _ := io.ReadAll(ptmx) // ends with EIO once asciinema has exited
	if err := cmd.Wait(); err != nil {
		t.Fatalf("asciinema cat: %v: %s", err, errb.String())
	}
	return string(out)
}

// txt of a session that ran a full-screen program and left it is what
// capture renders, history included; the page version has it too.
func TestExportTextIsCapture(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	if _, err := exec.LookPath("vim"); err != nil {
		t.Skip("vim is not installed")
	}
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "fs", "--size", "80x24", "--", "sh")
	e.MustTk("send", "fs", `for i in $(seq 1 60); do echo "before $i"; done; vim -u NONE -N`)
	if _, errs, code := e.Tk("wait", "fs", "--from", "start", "--output", "VIM - Vi IMproved", "--timeout", "20s"); code != 0 {
		t.Fatalf("vim did not start: %s", errs)
	}
	// Keys, not pastes: vim takes bracketed pastes as text to insert.
	e.MustTk("send", "fs", "-l", "ifull screen text")
	e.MustTk("send", "fs", "--key", "Esc")
	e.MustTk("send", "fs", "-l", ":q!\r")
	// vim flushes the terminal's unread input as it leaves: type the next
	// line once the shell's screen is back.
	e2e.WaitFor(t, 20*time.Second, "vim to quit", func() bool { return strings.Contains(e.MustTk("capture", "fs"), "before 60") })
	e.MustTk("send", "fs", `printf 'after \033[1;32mvim\033[0m\n'`)
	if _, errs, code := e.Tk("wait", "fs", "--from", "start", "--output", "after \x1b[1;32mvim", "--timeout", "20s"); code != 0 {
		t.Fatalf("the shell did not come back: %s", errs)
	}
	e.WaitStill("fs", 500*time.Millisecond) // the prompt is drawn
	txt := e.MustTk("export", "fs", "--format", "txt")
	captured := e.MustTk("capture", "--scrollback", "100000", "fs")
	if txt != captured {
		t.Fatalf("export txt:\n%s\ncapture:\n%s", txt, captured)
	}
	if !strings.Contains(txt, "before 1\n") || !strings.Contains(txt, "after vim") || strings.Contains(txt, "full screen text") {
		t.Fatalf("export txt:\n%s", txt)
	}
	page := e.MustTk("export", "fs", "--format", "html")
	if !strings.Contains(page, "before 1\n") || !strings.Contains(page, `<span style="color:#7ee09b;font-weight:bold">vim</span>`) {
		t.Fatalf("export html:\n%s", page)
	}
}

// Secrets are gone from what is made for sharing, and from raw on request.
func TestExportRedact(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	const key = "AKIAIOSFODNN7EXAMPLE"
	const token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	e.MustTk("new", "--name", "sec", "--", "sh", "-c", "echo key=AKIAIOSF''ODNN7EXAMPLE; sleep 0.3; echo gh "+token+"; echo fine")
	if _, errs, code := e.Tk("wait", "sec", "--exit", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	for _, args := range [][]string{{"-f", "cast"}, {"-f", "txt"}, {"-f", "html"}, {"-f", "raw", "--redact"}, {"-f", "raw", "--redact-pattern", "fi.e"}} {
		out := e.MustTk(append([]string{"export", "sec"}, args...)...)
		if strings.Contains(out, key) || strings.Contains(out, token) || !strings.Contains(out, "[REDACTED]") {
			t.Errorf("export %v still shows a secret:\n%s", args, out)
		}
	}
	if out := e.MustTk("export", "sec", "-f", "raw"); !strings.Contains(out, key) || !strings.Contains(out, "fine") {
		t.Errorf("raw export lost bytes: %q", out)
	}
	if out := e.MustTk("export", "sec", "-f", "txt", "--redact=false"); !strings.Contains(out, key) {
		t.Errorf("--redact=false redacted: %q", out)
	}
	file := filepath.Join(t.TempDir(), "sec.html")
	e.MustTk("export", "sec", "-o", file)
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("exported file: %v %v", st, err)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "<!DOCTYPE html>") || strings.Contains(string(b), key) {
		t.Errorf("exported page:\n%s", b)
	}
	// A range by offsets, and the errors a user meets.
	raw := e.MustTk("capture", "--raw", "sec")
	from := strings.Index(raw, "gh ")
	if out := e.MustTk("export", "sec", "-f", "raw", "--from", strconv.Itoa(from), "--to", strconv.Itoa(from+2)); out != "gh" {
		t.Errorf("raw export of [%d, %d) = %q", from, from+2, out)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"export", "nosuch", "-f", "txt"}, 1, `no session "nosuch"`},
		{[]string{"export", "sec", "-f", "pdf"}, 2, "cast, txt, html, raw"},
		{[]string{"export", "sec"}, 2, "cast, txt, html, raw"},
		{[]string{"export", "sec", "-f", "txt", "--from", "20", "--to", "10"}, 1, "--from (offset 20) is after --to (offset 10)"},
		{[]string{"export", "sec", "-f", "txt", "--from", "soon"}, 2, "--from"},
		{[]string{"grep", "nosuch", "x"}, 1, `no session "nosuch"`},
		{[]string{"grep", "sec", "("}, 2, "pattern"},
	} {
		_, errs, code := e.Tk(c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("termkeep %v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errs, c.code, c.msg)
		}
	}
}

// grep finds a line 5000 others scrolled off the screen, at its offset in
// the log, with its time; nothing found is exit 1.
func TestGrepScrolledOut(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "g", "--", "sh", "-c", `printf 'the \033[1mneedle\033[0m line\n'; seq 1 5000`)
	if _, errs, code := e.Tk("wait", "g", "--exit", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	if screen := e.MustTk("capture", "g"); strings.Contains(screen, "needle") {
		t.Fatalf("the line is still on the screen:\n%s", screen)
	}
	out := e.MustTk("grep", "g", "NEEDLE", "-i", "--json")
	var hit api.GrepHit
	if err := json.Unmarshal([]byte(out), &hit); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("grep --json: %q %v", out, err)
	}
	// The hit is the match's bytes, after "the \033[1m".
	if hit.Offset != 8 || hit.End != 14 || hit.Line != "the needle line" || hit.Time == nil || time.Since(*hit.Time) > time.Minute {
		t.Fatalf("hit %+v", hit)
	}
	if out := e.MustTk("grep", "g", `^4999$`); !strings.HasSuffix(out, "  4999\n") {
		t.Fatalf("grep: %q", out)
	}
	if out, errs, code := e.Tk("grep", "g", "haystack"); code != 1 || out != "" || errs != "" {
		t.Fatalf("grep with no hit: exit %d %q %q", code, out, errs)
	}
	// -m stops after N hits, the first ones; -F takes the pattern as text
	// (a regexp that does not compile, or one that would match elsewhere).
	if out := e.MustTk("grep", "g", "-m", "3", `^49\d\d$`); len(strings.Split(strings.TrimSpace(out), "\n")) != 3 || !strings.HasSuffix(out, "  4902\n") {
		t.Fatalf("grep -m 3: %q", out)
	}
	if out := e.MustTk("grep", "g", "-F", "needle l"); !strings.HasSuffix(out, "  the needle line\n") {
		t.Fatalf("grep -F: %q", out)
	}
	if out, _, code := e.Tk("grep", "g", "-F", "4.9"); code != 1 || out != "" {
		t.Fatalf("grep -F 4.9 matched as a regexp: exit %d %q", code, out)
	}
	if _, errs, code := e.Tk("grep", "g", "needle("); code != 2 || !strings.Contains(errs, "-F") {
		t.Fatalf("a bad regexp: exit %d %q", code, errs)
	}
	if out, errs, code := e.Tk("grep", "g", "-F", "needle("); code != 1 || out != "" || errs != "" {
		t.Fatalf("grep -F needle(: exit %d %q %q", code, out, errs)
	}
}

// A full-screen program's window shrunk and grown again while it printed
// nothing: the shrink scrolled rows 1-12 away. The live screen after a
// restart (from the model's checkpoint), the screen at the end as capture
// --at renders it from the log, export's txt and the recording's resizes
// all show it: row 13 at the top, blank rows below row 24.
func TestReadersApplyEveryResize(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--name", "fs", "--size", "80x24", "--", "sh", "-c",
		`printf '\033[?1049h\033[H'; i=1; while [ $i -lt 24 ]; do printf 'row %02d\n' $i; i=$((i+1)); done; printf 'row 24'; exec sleep 600`))
	if _, errs, code := e.Tk("wait", "fs", "--from", "start", "--output", "row 24", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
	resizeTo(t, e, id, 80, 12)
	resizeTo(t, e, id, 80, 24)
	// Stopped before any snapshot applied the two changes, the server
	// writes its model's checkpoint at their offset; the next server
	// starts its model from it, and finds nothing after it to read.
	e.MustTk("shutdown")
	e.Srv.Wait()
	e.Srv = nil
	e.StartServer()
	live := e.MustTk("capture", "fs")
	if !strings.HasPrefix(live, "row 13\n") || !strings.Contains(live, "row 24\n") || strings.Contains(live, "row 12") {
		t.Fatalf("the live screen after the shrink and grow, and a restart:\n%s", live)
	}
	e.KillServer()
	e.StartServer()
	if again := e.MustTk("capture", "fs"); again != live {
		t.Fatalf("after SIGKILL and restart capture shows\n%s\nwant\n%s", again, live)
	}
	end := len(e.MustTk("capture", "fs", "--raw"))
	if at := e.MustTk("capture", "fs", "--at", strconv.Itoa(end)); at != live {
		t.Fatalf("capture --at %d:\n%s\nthe live screen:\n%s", end, at, live)
	}
	if txt := e.MustTk("export", "fs", "--format", "txt"); strings.TrimRight(txt, "\n") != strings.TrimRight(live, "\n") {
		t.Fatalf("export txt:\n%s\nthe live screen:\n%s", txt, live)
	}
	// The recording resizes as the session did: 80x12, then 80x24.
	_, evs := castEvents(t, e.MustTk("export", "fs", "--format", "cast"))
	var sizes []string
	for _, ev := range evs {
		if ev[1] == "r" {
			sizes = append(sizes, ev[2].(string))
		}
	}
	if strings.Join(sizes, " ") != "80x12 80x24" {
		t.Fatalf("the recording's resizes: %v, want 80x12 then 80x24", sizes)
	}
}

// An export marks every cut: the bytes retention dropped, at the start of
// every format, and the history over --max-lines, at the top of txt and
// html, with the number of lines left out. --max-lines 0 keeps them all;
// a bad --max-lines is a usage error.
func TestExportMarksCuts(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.ServerEnv = []string{"TERMKEEP_LOG_RETENTION=256KiB"}
	e.StartServer()
	const n = 100_000
	e.MustTk("new", "--name", "big", "--", "seq", "1", strconv.Itoa(n))
	if _, errs, code := e.Tk("wait", "big", "--exit", "--timeout", "60s"); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
	// The screen at the end: n-22 to n, then the cursor's row.
	all, errs, code := e.Tk("export", "big", "-f", "txt", "--max-lines", "0")
	retained := regexp.MustCompile(`^\n\[termkeep: (\d+) bytes no longer retained\]\n`).FindStringSubmatch(all)
	if code != 0 || retained == nil || !strings.Contains(all, fmt.Sprintf("\n%d\n%d\n", n-23, n-22)) || strings.Contains(all, "lines left out") {
		t.Fatalf("export txt --max-lines 0: %d %s\n%.300s", code, errs, all)
	}
	if !strings.Contains(errs, "bytes 0-"+retained[1]+" no longer retained") || strings.Contains(errs, "lines of history") {
		t.Fatalf("export txt --max-lines 0 warned:\n%s", errs)
	}
	history := strings.Count(all, "\n") - 24
	for _, max := range []int{1000, 500} {
		left := history - max
		marker := fmt.Sprintf("[termkeep: %d lines left out (more history than the export keeps: --max-lines %d)]", left, max)
		firstKept := n - 23 - max + 1
		txt, errs, code := e.Tk("export", "big", "-f", "txt", "--max-lines", strconv.Itoa(max))
		// The retention line went with the lines left out: it is named
		// above the cut, where it was in the stream.
		want := fmt.Sprintf("[termkeep: %s bytes no longer retained]\n%s\n%d\n", retained[1], marker, firstKept)
		if code != 0 || !strings.HasPrefix(txt, want) || strings.Count(txt, "\n") != 2+max+24 {
			t.Fatalf("export txt --max-lines %d (%d): begins\n%.200s\nwant\n%s", max, code, txt, want)
		}
		if !strings.Contains(errs, fmt.Sprintf("the %d oldest lines of history are left out", left)) {
			t.Fatalf("export txt --max-lines %d warned:\n%s", max, errs)
		}
		page := e.MustTk("export", "big", "-f", "html", "--max-lines", strconv.Itoa(max))
		at := strings.Index(page, marker)
		if at < 0 || !strings.Contains(page[at:], fmt.Sprintf("\n%d\n", firstKept)) || strings.Contains(page, fmt.Sprintf("\n%d\n", firstKept-1)) ||
			strings.Index(page, "bytes no longer retained]") > at {
			t.Fatalf("export html --max-lines %d:\n%.2000s", max, page)
		}
	}
	// The default keeps 100,000 lines: more than this log holds.
	if def := e.MustTk("export", "big", "-f", "txt"); def != all {
		t.Fatalf("export txt with the default limit differs from --max-lines 0")
	}
	// A recording has no history limit: it plays every retained line,
	// after the line for what retention dropped.
	_, evs := castEvents(t, e.MustTk("export", "big", "-f", "cast"))
	played := castText(evs)
	if i := strings.Index(played, "[termkeep: "+retained[1]+" bytes no longer retained]"); i < 0 || !strings.Contains(played[i:], fmt.Sprintf("\r\n%d\r\n", n-1000)) {
		t.Fatalf("the cast does not mark the retention cut before the lines:\n%.300s", played)
	}
	for _, bad := range [][]string{{"--max-lines", "-1"}, {"--max-lines", "lots"}, {"-f", "cast", "--max-lines", "10"}, {"-f", "raw", "--max-lines", "10"}} {
		args := append([]string{"export", "big"}, bad...)
		if !slices.Contains(bad, "-f") {
			args = append(args, "-f", "txt")
		}
		if out, errs, code := e.Tk(args...); code != 2 || out != "" || !strings.Contains(errs, "max-lines") {
			t.Errorf("termkeep %s: exit %d, want 2 and a message naming --max-lines: %q", strings.Join(args, " "), code, errs)
		}
	}
	// The API refuses them too, before it reads the log.
	for _, q := range []string{"format=txt&max_lines=-1", "format=html&max_lines=x", "format=cast&max_lines=10", "format=raw&max_lines=0"} {
		if code, body := e.UnixGet("/v1/sessions/big/export?" + q); code != 400 || !strings.Contains(string(body), "max_lines") {
			t.Errorf("export?%s: %d %s, want 400 naming max_lines", q, code, body)
		}
	}
}
