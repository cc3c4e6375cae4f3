//go:build ignore

// Command record makes the screen model's differential corpus
// (internal/screen/testdata/corpus): it runs real programs in a real pty of
// a given size with TERM=xterm-256color, types scripted keystrokes with
// pauses, resizes the pty at chosen moments, and saves exactly what the pty
// master produced. The tests only read the committed files; run this again
// only to add or replace a case, from the module root:
//
//	go run internal/screen/testdata/record/main.go              # every case
//	go run internal/screen/testdata/record/main.go -run 'vim|less'
//	go run internal/screen/testdata/record/main.go -list
//
// Each case is <name>.bin (the bytes) and <name>.json (size, resizes with
// the byte offset at which each took effect, the sizes of the pty reads,
// and how it was recorded). The escape-sequence cases are bash scripts in
// scripts/ whose printf output still goes through the pty (ONLCR and all).
// Programs whose screens change on their own (top, htop) differ at every
// recording; that is fine because a recording is made once and committed.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// A step is one thing the recorder does to the running program.
type step struct {
	send   string        // type these bytes
	sleep  time.Duration // pause
	wait   string        // wait until the output since the last step contains this
	quiet  time.Duration // wait until the program has printed nothing for this long
	resize [2]int        // cols, rows: resize the pty (after waiting for quiet)
}

func keys(s string) step               { return step{send: s} }
func sleep(ms int) step                { return step{sleep: time.Duration(ms) * time.Millisecond} }
func waitFor(s string) step            { return step{wait: s} }
func quiet(ms int) step                { return step{quiet: time.Duration(ms) * time.Millisecond} }
func resize(cols, rows int) step       { return step{resize: [2]int{cols, rows}} }
func typeLine(cmd, want string) []step { return []step{keys(cmd + "\r"), waitFor(want), quiet(300)} }

// A recording is one corpus case.
type recording struct {
	name       string
	cols, rows int
	cmd        []string // run in the work directory; "$SCRIPTS" is replaced
	steps      []step
	// keepRunning cuts the recording after the last step (and a quiet
	// spell) while the program still runs, so the case ends on its screen;
	// otherwise the recorder waits for the program to exit and keeps all.
	keepRunning bool
	about       string // what the case exercises, for "source"
}

// shell is an interactive bash with a fixed prompt and no rc files.
var shell = []string{"bash", "--norc", "--noprofile", "-i"}

func script(name string) []string { return []string{"bash", "$SCRIPTS/" + name + ".sh"} }

// watching runs a process viewer on a few sleeping children of its own
// (top -p, htop -p), so that the recording shows none of the machine's
// other processes.
func watching(viewer string) []string {
	return []string{"bash", "-c", "sleep 600 & sleep 601 & (sleep 602; :) & exec " + viewer + " $$,$(jobs -p | paste -sd,)"}
}

func seq(steps ...any) []step {
	var out []step
	for _, s := range steps {
		switch s := s.(type) {
		case step:
			out = append(out, s)
		case []step:
			out = append(out, s...)
		default:
			panic(fmt.Sprintf("seq: %T", s))
		}
	}
	return out
}

var recordings = []recording{
	{name: "vim", cols: 80, rows: 24, cmd: shell, keepRunning: true,
		about: "bash; vim with syntax highlighting: scroll, insert text (with CJK), :split, scroll the lower window, :q closes it, resize, still running",
		steps: seq(
			waitFor("$ "),
			keys("vim -u NONE -i NONE -N -n -c 'syntax on' -c 'set number ruler laststatus=2 background=dark' sample.go\r"),
			waitFor("sample.go"), quiet(800),
			keys("\x06"), quiet(300), keys("\x06"), quiet(300), keys("\x02"), quiet(300),
			keys("10jo// 插入 some text, then more text\x1b"), quiet(300),
			keys("Ofunc inserted() { return }\x1b"), quiet(300),
			keys(":split\r"), quiet(500),
			keys("\x17j"), quiet(200), keys("\x05\x05\x05"), quiet(300), keys("\x04"), quiet(300),
			keys(":q\r"), quiet(500),
			keys("\x19\x19"), quiet(300),
			resize(100, 30), quiet(600),
			keys("G"), quiet(300),
			resize(72, 20), quiet(600),
		)},
	{name: "vim-quit", cols: 80, rows: 24, cmd: shell,
		about: "bash; vim edits a file, :wq restores the shell screen; cat shows the result",
		steps: seq(
			waitFor("$ "),
			typeLine("echo before vim", "before vim"),
			keys("vim -u NONE -i NONE -N -n -c 'syntax on' notes.txt\r"),
			waitFor("notes.txt"), quiet(800),
			keys("Gonew last line\x1bggOnew first line\x1b"), quiet(300),
			keys(":wq\r"), waitFor("$ "), quiet(300),
			typeLine("head -3 notes.txt; tail -2 notes.txt", "new last line"),
			keys("exit\r"),
		)},
	{name: "less", cols: 80, rows: 24, cmd: shell,
		about: "bash; less pages forward and back through a file, searches, quits back to the shell",
		steps: seq(
			waitFor("$ "),
			typeLine("seq 1 5", "5"),
			keys("less sample.txt\r"), waitFor("sample.txt"), quiet(500),
			keys(" "), quiet(300), keys(" "), quiet(300), keys("b"), quiet(300),
			keys("/quartz\r"), quiet(400), keys("n"), quiet(300), keys("N"), quiet(300),
			keys("G"), quiet(300), keys("g"), quiet(300),
			keys("q"), waitFor("$ "), quiet(300),
			typeLine("echo after less", "after less"),
			keys("exit\r"),
		)},
	{name: "less-running", cols: 80, rows: 24, cmd: shell, keepRunning: true,
		about: "bash; less -R on a file with SGR colors and long lines, -S chopping, horizontal scroll, search highlight; ends inside less",
		steps: seq(
			waitFor("$ "),
			keys("less -R sample.txt\r"), waitFor("sample.txt"), quiet(500),
			keys("-S\r"), quiet(300), keys("\x1b)"), quiet(300), keys("/wrap\r"), quiet(400),
			keys("j"), quiet(200), keys("j"), quiet(300),
		)},
	{name: "man-ls", cols: 80, rows: 24, cmd: shell, keepRunning: true,
		about: "bash; man ls through less: bold and underlined text, page down, search; ends inside less",
		steps: seq(
			waitFor("$ "),
			keys("man ls\r"), waitFor("NAME"), quiet(800),
			keys(" "), quiet(300), keys("/--color\r"), quiet(400), keys("n"), quiet(300),
		)},
	{name: "top", cols: 100, rows: 30, cmd: watching("top -d 0.5 -p"), keepRunning: true,
		about: "interactive top (watching only its own sleeping children) refreshing every 0.5 s, toggles (1, c), a few refreshes; ends inside top",
		steps: seq(
			quiet(200), sleep(1200), keys("c"), sleep(800), keys("1"), sleep(1000), quiet(150),
		)},
	{name: "htop", cols: 100, rows: 30, cmd: watching("htop -d 5 -p"), keepRunning: true,
		about: "htop (watching only its own sleeping children) refreshing every 0.5 s, tree view (t), a resize; ends inside htop",
		steps: seq(
			quiet(300), sleep(1200), keys("t"), sleep(800),
			resize(90, 26), sleep(1200), quiet(200),
		)},
	{name: "git-log", cols: 80, rows: 24, cmd: shell,
		about: "bash; git log --color --graph of a small repo with merges, full and --oneline",
		steps: seq(
			waitFor("$ "),
			typeLine("git -C repo --no-pager log --color --graph --decorate --all", "Initial commit"),
			typeLine("git -C repo --no-pager log --color --graph --decorate --oneline --all", "Initial commit"),
			keys("exit\r"),
		)},
	{name: "readline", cols: 80, rows: 24, cmd: shell,
		about: "bash; readline editing of a command line longer than the screen is wide (arrows, Ctrl-A/E, backspace, insert), history recall, after clear",
		steps: seq(
			waitFor("$ "),
			typeLine("seq 1 30", "30"),
			keys("clear\r"), quiet(500),
			keys("printf '%s\\n' one two three four five six seven eight nine ten eleven twelve thirteen fourteen"), quiet(300),
			keys("\x01"), quiet(200), keys(strings.Repeat("\x1b[C", 13)), quiet(200), keys(" zero"), quiet(200),
			keys("\x05"), quiet(200), keys("\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f"), quiet(200), keys("FOURTEEN"), quiet(200),
			keys("\x1b[D\x1b[D\x1b[D\x1b[D"), quiet(200), keys("\x7f"), quiet(200),
			keys("\r"), waitFor("FOUTEEN"), quiet(300),
			keys("\x1b[A"), quiet(300), keys("\x15echo cleared soon\r"), waitFor("soon\r\n"), quiet(300),
			typeLine("echo the end; echo -e '\\e[1mbold\\e[0m \\e[36mcyan\\e[0m'", "cyan"),
			keys("exit\r"),
		)},
	{name: "long-output", cols: 80, rows: 24, cmd: script("long-output"),
		about: "1,000 lines of colored output of varied lengths, some wrapping: a deep scrollback"},
	{name: "progress", cols: 80, rows: 24, cmd: script("progress"),
		about: "progress bars redrawn with \\r, \\r\\e[K and backspace"},
	{name: "cjk-emoji", cols: 80, rows: 24, cmd: script("cjk-emoji"),
		about: "CJK and emoji text, wide characters at and across the right margin, overwritten halves"},
	{name: "combining", cols: 80, rows: 24, cmd: script("combining"),
		about: "combining marks, Hangul jamo, ZWJ, marks at the margin and after wide characters"},
	{name: "scroll-region", cols: 80, rows: 24, cmd: script("scroll-region"),
		about: "DECSTBM with LF, IND, RI, NEL, SU, SD, IL, DL inside and outside the region"},
	{name: "insert-mode", cols: 80, rows: 24, cmd: script("insert-mode"),
		about: "IRM on and off, inserting past the margin, wide characters; ends with IRM on"},
	{name: "erase-line", cols: 80, rows: 24, cmd: script("erase-line"),
		about: "EL 0/1/2, ECH, ICH, DCH, IL, DL with a background color set"},
	{name: "erase-display", cols: 60, rows: 16, cmd: script("erase-display"),
		about: "ED 0/1/2/3 with scrollback and a background color"},
	{name: "tabs", cols: 80, rows: 24, cmd: script("tabs"),
		about: "default tab stops, HTS, TBC 0/3, CHT, CBT, tabs at the margin"},
	{name: "dec-graphics", cols: 80, rows: 24, cmd: script("dec-graphics"),
		about: "DEC special graphics through ESC ( 0 and SO/SI with ESC ) 0"},
	{name: "origin-mode", cols: 80, rows: 24, cmd: script("origin-mode"),
		about: "DECOM with a scroll region, CUP clamped to the region; ends with DECOM on"},
	{name: "alt-47", cols: 80, rows: 24, cmd: script("alt-47"),
		about: "scrollback, then switches with ?47 and ?1047; ends in the alternate buffer"},
	{name: "alt-1049", cols: 80, rows: 24, cmd: script("alt-1049"),
		about: "?1049 and ?1048 save and restore of the cursor; ends in the normal buffer"},
	{name: "sgr", cols: 100, rows: 40, cmd: script("sgr"),
		about: "SGR: 16, 256 and truecolor (semicolon and colon forms), every attribute and its reset"},
	{name: "title", cols: 80, rows: 24, cmd: script("title"),
		about: "OSC 0/1/2 with BEL and ST, title push and pop (XTWINOPS 22/23)"},
	{name: "modes", cols: 80, rows: 24, cmd: script("modes"),
		about: "DECCKM, bracketed paste, focus events, mouse modes, DECTCEM, DECAWM off; ends with them set"},
	{name: "cursor", cols: 80, rows: 24, cmd: script("cursor"),
		about: "cursor movement (CUU..VPR), clamping, DECSC/DECRC with attributes and charset, CSI s/u, BS at the margin"},
	{name: "ris", cols: 80, rows: 24, cmd: script("ris"),
		about: "modes, title and scroll region set, then RIS (ESC c), then a little output"},
	{name: "reflow", cols: 80, rows: 24, cmd: shell,
		about: "bash prints long soft-wrapped lines and scrollback; the pty is narrowed, then widened, while bash waits at its prompt",
		steps: seq(
			waitFor("$ "),
			typeLine("seq 1 30", "30"),
			typeLine(`for i in 1 2 3 4 5; do printf '%03d %s|\n' $i "$(printf 'word%.0s ' $(seq 1 $((i*12))))"; done`, "005"),
			typeLine(`printf '%s\n' "$(printf 'x%.0s' $(seq 1 160))" short`, "short"),
			typeLine(`printf '%s|\n' "$(printf '中文%.0s' $(seq 1 25))" "a$(printf '字%.0s' $(seq 1 45))"`, "|"),
			resize(50, 20), quiet(500),
			typeLine("echo narrowed to 50x20", "narrowed to"),
			typeLine(`printf '%s|\n' "$(printf 'ab%.0s' $(seq 1 70))"`, "|"),
			resize(120, 30), quiet(500),
			typeLine("echo widened to 120x30", "widened to"),
			resize(80, 10), quiet(500),
			keys("exit\r"),
		)},
}

func main() {
	run := flag.String("run", "", "record only the cases whose names match this regexp")
	list := flag.Bool("list", false, "list the cases and exit")
	out := flag.String("out", "internal/screen/testdata/corpus", "directory for <name>.bin and <name>.json")
	flag.Parse()
	log.SetFlags(0)
	if *list {
		for _, r := range recordings {
			fmt.Printf("%-14s %dx%d  %s\n", r.name, r.cols, r.rows, r.about)
		}
		return
	}
	if _, err := os.Stat("go.mod"); err != nil {
		log.Fatal("record: run it from the module root (go run internal/screen/testdata/record/main.go)")
	}
	scripts, err := filepath.Abs("internal/screen/testdata/record/scripts")
	if err != nil {
		log.Fatal(err)
	}
	re, err := regexp.Compile(*run)
	if err != nil {
		log.Fatalf("record: -run: %v", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	for _, r := range recordings {
		if !re.MatchString(r.name) {
			continue
		}
		if err := record(r, scripts, *out); err != nil {
			log.Fatalf("record %s: %v", r.name, err)
		}
	}
}

// caseFile is <name>.json.
type caseFile struct {
	Cols    int          `json:"cols"`
	Rows    int          `json:"rows"`
	Resizes []resizeMark `json:"resizes,omitempty"`
	Chunks  []int        `json:"chunks,omitempty"`
	Source  string       `json:"source"`
}

type resizeMark struct {
	At   int `json:"at"`
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// output collects what the pty master produced.
type output struct {
	mu     sync.Mutex
	buf    []byte
	chunks []int
	last   time.Time // of the last read
	done   bool      // the master reported EOF or EIO
	err    error
	wake   chan struct{} // closed and replaced on every read
}

func (o *output) read(master *os.File) {
	p := make([]byte, 32<<10)
	for {
		n, err := master.Read(p)
		o.mu.Lock()
		if n > 0 {
			o.buf = append(o.buf, p[:n]...)
			o.chunks = append(o.chunks, n)
			o.last = time.Now()
		}
		if err != nil {
			o.done = true
			if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrClosed) {
				o.err = err
			}
		}
		close(o.wake)
		o.wake = make(chan struct{})
		o.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// waitUntil calls cond under the lock after every read until it is true,
// or fails after the timeout.
func (o *output) waitUntil(what string, timeout time.Duration, cond func() bool) error {
	deadline := time.After(timeout)
	for {
		o.mu.Lock()
		ok, wake, done := cond(), o.wake, o.done
		o.mu.Unlock()
		if ok {
			return nil
		}
		if done {
			return fmt.Errorf("the program ended while waiting for %s", what)
		}
		select {
		case <-wake:
		case <-deadline:
			return fmt.Errorf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func record(r recording, scripts, outDir string) error {
	work, err := os.MkdirTemp("", "termkeep-record-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := fixtures(work); err != nil {
		return fmt.Errorf("fixtures: %w", err)
	}
	args := make([]string, len(r.cmd))
	for i, a := range r.cmd {
		args[i] = strings.ReplaceAll(a, "$SCRIPTS", scripts)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(work, "home"),
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"TZ=UTC",
		"SHELL=/bin/bash",
		"PS1=$ ",
		"HISTFILE=/dev/null",
		"PAGER=less",
		"MANPAGER=less",
	}
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(r.cols), Rows: uint16(r.rows)})
	if err != nil {
		return fmt.Errorf("start %v: %w", args, err)
	}
	o := &output{wake: make(chan struct{}), last: time.Now()}
	readDone := make(chan struct{})
	go func() { o.read(master); close(readDone) }()
	kill := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		master.Close()
	}

	var resizes []resizeMark
	mark := 0 // output offset where the current wait begins
	for i, s := range r.steps {
		var err error
		switch {
		case s.send != "":
			o.mu.Lock()
			mark = len(o.buf)
			o.mu.Unlock()
			_, err = master.Write([]byte(s.send))
		case s.sleep > 0:
			time.Sleep(s.sleep)
		case s.wait != "":
			err = o.waitUntil(fmt.Sprintf("%q", s.wait), 15*time.Second, func() bool {
				return bytes.Contains(o.buf[mark:], []byte(s.wait))
			})
		case s.quiet > 0:
			err = waitQuiet(o, s.quiet)
		case s.resize != [2]int{}:
			// Let the program finish what it printed for the old size, so
			// that the recorded offset is where the size really changed.
			if err = waitQuiet(o, 300*time.Millisecond); err == nil {
				o.mu.Lock()
				at := len(o.buf)
				err = pty.Setsize(master, &pty.Winsize{Cols: uint16(s.resize[0]), Rows: uint16(s.resize[1])})
				o.mu.Unlock()
				resizes = append(resizes, resizeMark{At: at, Cols: s.resize[0], Rows: s.resize[1]})
			}
		}
		if err != nil {
			kill()
			return fmt.Errorf("step %d %+v: %w", i, s, err)
		}
	}

	var data []byte
	var chunks []int
	if r.keepRunning {
		if err := waitQuiet(o, 500*time.Millisecond); err != nil {
			kill()
			return err
		}
		o.mu.Lock()
		data = bytes.Clone(o.buf)
		chunks = append([]int(nil), o.chunks...)
		o.mu.Unlock()
		kill()
		<-readDone
	} else {
		select {
		case <-readDone:
		case <-time.After(20 * time.Second):
			kill()
			return errors.New("the program did not exit")
		}
		if err := cmd.Wait(); err != nil {
			log.Printf("%s: %v", r.name, err)
		}
		master.Close()
		data, chunks = o.buf, o.chunks
	}
	if o.err != nil {
		return fmt.Errorf("read the pty: %w", o.err)
	}

	meta := caseFile{
		Cols:    r.cols,
		Rows:    r.rows,
		Resizes: resizes,
		Chunks:  chunks,
		Source: fmt.Sprintf("testdata/record/main.go case %q: %s %dx%d, TERM=xterm-256color; %s",
			r.name, strings.ReplaceAll(strings.Join(r.cmd, " "), "$SCRIPTS", "testdata/record/scripts"), r.cols, r.rows, r.about),
	}
	js, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outDir, r.name+".bin"), data, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outDir, r.name+".json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	warn := ""
	if len(data) > 200<<10 {
		warn = " (over 200 KiB: shorten it)"
	}
	log.Printf("%-14s %7d bytes in %4d reads, %d resizes%s", r.name, len(data), len(chunks), len(resizes), warn)
	return nil
}

// waitQuiet waits until the program has printed nothing for d, counting
// from the later of its last output and the call, so that a program that
// has not begun to answer the last keystrokes is waited for too.
func waitQuiet(o *output, d time.Duration) error {
	start := time.Now()
	deadline := start.Add(20 * time.Second)
	for {
		o.mu.Lock()
		last, done := o.last, o.done
		o.mu.Unlock()
		if last.Before(start) {
			last = start
		}
		since := time.Since(last)
		if since >= d || done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the program never went quiet for %v", d)
		}
		time.Sleep(min(d-since, 50*time.Millisecond) + time.Millisecond)
	}
}

// fixtures writes the files the cases open: sample.go for vim, sample.txt
// for less, notes.txt, and a git repository with branches and merges, all
// with fixed contents and dates.
func fixtures(work string) error {
	if err := os.MkdirAll(filepath.Join(work, "home"), 0o755); err != nil {
		return err
	}
	var g strings.Builder
	g.WriteString("// Package sample is text for the screen model's vim recording.\npackage sample\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&g, "// Func%02d joins %d words; 中文注释 %d.\nfunc Func%02d(words []string) string {\n\tif len(words) > %d {\n\t\twords = words[:%d]\n\t}\n\treturn fmt.Sprint(strings.Join(words, \" \"), %d)\n}\n\n", i, i, i, i, i, i, i)
	}
	if err := os.WriteFile(filepath.Join(work, "sample.go"), []byte(g.String()), 0o644); err != nil {
		return err
	}
	var t strings.Builder
	stones := []string{"agate", "basalt", "chert", "diorite", "eclogite", "flint", "gneiss", "quartz"}
	for i := 1; i <= 300; i++ {
		s := stones[i%len(stones)]
		switch {
		case i%25 == 0:
			fmt.Fprintf(&t, "%04d \x1b[1;32m%s\x1b[0m is \x1b[4mgreen\x1b[24m and \x1b[38;5;208morange\x1b[39m here\n", i, s)
		case i%17 == 0:
			fmt.Fprintf(&t, "%04d a long line that will wrap around the right margin of the terminal: %s %s %s %s %s %s %s %s\n", i, s, s, s, s, s, s, s, s)
		case i%13 == 0:
			fmt.Fprintf(&t, "%04d\ttabbed\t%s\t日本語のテキスト\t%d\n", i, s, i*7)
		default:
			fmt.Fprintf(&t, "%04d line about %s\n", i, s)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "sample.txt"), []byte(t.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		return err
	}
	return gitRepo(filepath.Join(work, "repo"))
}

func gitRepo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := 0
	git := func(args ...string) error {
		n++
		date := fmt.Sprintf("2024-03-%02dT10:%02d:00Z", 1+n/10, n%60)
		c := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
		c.Dir = dir
		c.Env = append(os.Environ(),
			"GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_AUTHOR_DATE="+date,
			"GIT_COMMITTER_NAME=Ada Lovelace", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_COMMITTER_DATE="+date,
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
		return nil
	}
	commit := func(file, msg string) error {
		f, err := os.OpenFile(filepath.Join(dir, file), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		fmt.Fprintln(f, msg)
		f.Close()
		if err := git("add", file); err != nil {
			return err
		}
		return git("commit", "-q", "-m", msg)
	}
	steps := []func() error{
		func() error { return git("init", "-q") },
		func() error { return commit("README", "Initial commit") },
		func() error { return commit("main.c", "Add main") },
		func() error { return git("checkout", "-q", "-b", "feature") },
		func() error { return commit("feature.c", "Start the feature") },
		func() error {
			return commit("feature.c", "Finish the feature with a long message that goes past the margin of an 80-column terminal")
		},
		func() error { return git("checkout", "-q", "main") },
		func() error { return commit("main.c", "Fix a bug on main") },
		func() error { return git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature") },
		func() error { return git("checkout", "-q", "-b", "topic") },
		func() error { return commit("topic.c", "Topic work") },
		func() error { return git("checkout", "-q", "main") },
		func() error { return commit("README", "Document the feature") },
		func() error { return git("tag", "v1.0") },
		func() error { return git("checkout", "-q", "-b", "wip", "topic") },
		func() error { return commit("wip.c", "Work in progress") },
		func() error { return git("checkout", "-q", "main") },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}
