package screen_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"termkeep/internal/screen"
)

// TestTmuxDifferential is a three-way check with tmux as a second,
// independent reference: each corpus case is replayed in a tmux pane of
// its own, and on every line where tmux and xterm.js show the same text
// (and, separately, the same colors and attributes) the model must show it
// too. Lines where the two references disagree are counted, not judged:
// there xterm.js alone decides, in TestXtermDifferential.
func TestTmuxDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the corpus in tmux; not in -short")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is not installed: `make test` installs it (apt-get install tmux)")
	}
	cases := loadCorpus(t)
	want := corpusXtermDumps(t, cases)

	var mu sync.Mutex
	var total tmuxCounts
	t.Cleanup(func() { t.Logf("all cases: %s", total) })
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			model, err := modelDump(c)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			tm, err := replayInTmux(tmux, c)
			if err != nil {
				t.Fatalf("%s: replay in tmux: %v", c.Name, err)
			}
			x := want[c.Name]
			n, problems := compareThreeWay(&x, tm, &model)
			mu.Lock()
			total.add(n)
			mu.Unlock()
			t.Logf("%s: %s", c.Name, n)
			if len(problems) > 0 {
				t.Errorf("%s: the model differs on lines where xterm.js and tmux agree (case: %s):\n  %s",
					c.Name, c.Source, strings.Join(problems, "\n  "))
			}
		})
	}
}

// tmuxCounts are the lines a case compared.
type tmuxCounts struct {
	Lines      int // lines of the screen and of the scrollback compared
	TextAgree  int // where xterm.js and tmux show the same text
	SGRAgree   int // of those, where they also show the same colors and attributes
	ModelText  int // of TextAgree, where the model's text differs
	ModelSGR   int // of SGRAgree, where the model has the text but other colors or attributes
	Unreadable int // cases whose tmux screen could not be compared (size differs)
}

func (a *tmuxCounts) add(b tmuxCounts) {
	a.Lines += b.Lines
	a.TextAgree += b.TextAgree
	a.SGRAgree += b.SGRAgree
	a.ModelText += b.ModelText
	a.ModelSGR += b.ModelSGR
	a.Unreadable += b.Unreadable
}

func (a tmuxCounts) String() string {
	s := fmt.Sprintf("%d lines compared; xterm.js and tmux agree on the text of %d (disagree on %d) and on the attributes of %d; the model differs on %d of the agreed texts and %d of the agreed attributes",
		a.Lines, a.TextAgree, a.Lines-a.TextAgree, a.SGRAgree, a.ModelText, a.ModelSGR)
	if a.Unreadable > 0 {
		s += fmt.Sprintf("; %d screens not compared (tmux's size differs)", a.Unreadable)
	}
	return s
}

// tmuxScreen is what capture-pane showed.
type tmuxScreen struct {
	Cols, Rows int
	Alt        bool
	History    []tmuxLine // oldest first
	Screen     []tmuxLine
}

// tmuxLine is one captured line: its characters, each with the colors and
// attributes in force when tmux printed it.
type tmuxLine []tmuxChar

type tmuxChar struct {
	R         rune
	Fg, Bg, F string // as in screen.DumpCell
}

func (l tmuxLine) Text() string {
	var b strings.Builder
	for _, c := range l {
		b.WriteRune(c.R)
	}
	return strings.TrimRight(b.String(), " ")
}

// replayInTmux plays a case's bytes into a new tmux server's only pane and
// captures it. The pane runs `cat` with the tty in raw mode, so the bytes
// reach tmux as recorded (no second ONLCR). Resizes happen between
// segments: after each segment the pane sets its title to a marker (tmux
// handles a pane's output in order, so the marker means the segment has
// been parsed), the test resizes the window, and a `wait-for` channel lets
// the pane go on.
func replayInTmux(tmux string, c corpusCase) (*tmuxScreen, error) {
	// A short directory: the socket path must fit in sun_path.
	dir, err := os.MkdirTemp("", "tk-tmux-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") && !strings.HasPrefix(kv, "TERM=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TERM=xterm-256color")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(tmux, append([]string{"-S", sock}, args...)...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
		}
		return string(out), nil
	}

	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g history-limit 100000\n"), 0o644); err != nil {
		return nil, err
	}
	cuts := []int{0}
	for _, r := range c.Resizes {
		cuts = append(cuts, r.At)
	}
	cuts = append(cuts, len(c.Data))
	var script strings.Builder
	script.WriteString("stty raw -echo\n")
	for i := 0; i+1 < len(cuts); i++ {
		seg := filepath.Join(dir, fmt.Sprintf("seg%d", i))
		if err := os.WriteFile(seg, c.Data[cuts[i]:cuts[i+1]], 0o644); err != nil {
			return nil, err
		}
		if i > 0 {
			fmt.Fprintf(&script, "%s -S %s wait-for tk-go-%d\n", tmux, sock, i)
		}
		fmt.Fprintf(&script, "cat %s\nprintf '\\033]2;tk-mark-%d\\033\\\\'\n", seg, i)
	}
	script.WriteString("exec sleep 1000\n")
	sh := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(sh, []byte(script.String()), 0o644); err != nil {
		return nil, err
	}

	if _, err := run("-f", conf, "new-session", "-d", "-s", "tk",
		"-x", strconv.Itoa(c.Cols), "-y", strconv.Itoa(c.Rows), "sh "+sh); err != nil {
		return nil, err
	}
	defer run("kill-server")

	waitMark := func(i int) error {
		mark := fmt.Sprintf("tk-mark-%d", i)
		deadline := time.Now().Add(30 * time.Second)
		for {
			title, err := run("display-message", "-p", "-t", "tk", "#{pane_title}")
			if err != nil {
				return err
			}
			if strings.TrimSpace(title) == mark {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the pane never showed %s (its title is %q)", mark, strings.TrimSpace(title))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for i, r := range c.Resizes {
		if err := waitMark(i); err != nil {
			return nil, err
		}
		if _, err := run("resize-window", "-t", "tk", "-x", strconv.Itoa(r.Cols), "-y", strconv.Itoa(r.Rows)); err != nil {
			return nil, err
		}
		if _, err := run("wait-for", "-S", fmt.Sprintf("tk-go-%d", i+1)); err != nil {
			return nil, err
		}
	}
	if err := waitMark(len(c.Resizes)); err != nil {
		return nil, err
	}

	info, err := run("display-message", "-p", "-t", "tk", "#{history_size} #{alternate_on} #{pane_width} #{pane_height}")
	if err != nil {
		return nil, err
	}
	var hsize, alt int
	var ts tmuxScreen
	if _, err := fmt.Sscan(info, &hsize, &alt, &ts.Cols, &ts.Rows); err != nil {
		return nil, fmt.Errorf("read %q: %v", info, err)
	}
	ts.Alt = alt == 1
	visible, err := run("capture-pane", "-p", "-e", "-t", "tk")
	if err != nil {
		return nil, err
	}
	ts.Screen = parseTmuxCapture(visible)
	if hsize > 0 {
		hist, err := run("capture-pane", "-p", "-e", "-t", "tk", "-S", strconv.Itoa(-hsize), "-E", "-1")
		if err != nil {
			return nil, err
		}
		ts.History = parseTmuxCapture(hist)
	}
	return &ts, nil
}

// decGraphics is the DEC special graphics set, as xterm.js maps it; tmux's
// capture prints those characters as ASCII between SO and SI.
var decGraphics = map[rune]rune{
	'`': '◆', 'a': '▒', 'b': '␉', 'c': '␌', 'd': '␍', 'e': '␊', 'f': '°', 'g': '±',
	'h': '␤', 'i': '␋', 'j': '┘', 'k': '┐', 'l': '┌', 'm': '└', 'n': '┼', 'o': '⎺',
	'p': '⎻', 'q': '─', 'r': '⎼', 's': '⎽', 't': '├', 'u': '┤', 'v': '┴', 'w': '┬',
	'x': '│', 'y': '≤', 'z': '≥', '{': 'π', '|': '≠', '}': '£', '~': '·',
}

// parseTmuxCapture reads `capture-pane -p -e` output: lines of text with
// SGR sequences, and SO/SI around line-drawing characters. tmux prints only
// the changes from the previous cell, across line ends too, so the state
// carries over from line to line.
func parseTmuxCapture(out string) []tmuxLine {
	var lines []tmuxLine
	var cur tmuxLine
	var st sgrState
	acs := false
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\n':
			lines = append(lines, cur)
			cur = nil
		case r == 0x0e:
			acs = true
		case r == 0x0f:
			acs = false
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j < len(rs) && rs[j] == 'm' {
				st.apply(string(rs[i+2 : j]))
			}
			i = j
		default:
			if acs {
				if g, ok := decGraphics[r]; ok {
					r = g
				}
			}
			cur = append(cur, tmuxChar{R: r, Fg: st.fg, Bg: st.bg, F: st.flags()})
		}
	}
	if len(cur) > 0 {
		lines = append(lines, cur)
	}
	return lines
}

// sgrState follows SGR sequences into Dump's terms.
type sgrState struct {
	fg, bg string
	attr   map[byte]bool // Dump's letters
}

func (s *sgrState) flags() string {
	var b strings.Builder
	for _, l := range []byte("bdiukrhso") {
		if s.attr[l] {
			b.WriteByte(l)
		}
	}
	return b.String()
}

func (s *sgrState) apply(params string) {
	if s.attr == nil {
		s.attr = map[byte]bool{}
	}
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		sub := strings.Split(ps[i], ":")
		n, _ := strconv.Atoi(sub[0])
		switch {
		case n == 0:
			s.fg, s.bg, s.attr = "", "", map[byte]bool{}
		case n == 1:
			s.attr['b'] = true
		case n == 2:
			s.attr['d'] = true
		case n == 3:
			s.attr['i'] = true
		case n == 4:
			s.attr['u'] = len(sub) < 2 || sub[1] != "0"
		case n == 5 || n == 6:
			s.attr['k'] = true
		case n == 7:
			s.attr['r'] = true
		case n == 8:
			s.attr['h'] = true
		case n == 9:
			s.attr['s'] = true
		case n == 21:
			s.attr['u'] = true
		case n == 22:
			s.attr['b'], s.attr['d'] = false, false
		case n == 23:
			s.attr['i'] = false
		case n == 24:
			s.attr['u'] = false
		case n == 25:
			s.attr['k'] = false
		case n == 27:
			s.attr['r'] = false
		case n == 28:
			s.attr['h'] = false
		case n == 29:
			s.attr['s'] = false
		case n == 53:
			s.attr['o'] = true
		case n == 55:
			s.attr['o'] = false
		case n >= 30 && n <= 37:
			s.fg = fmt.Sprintf("p%d", n-30)
		case n >= 90 && n <= 97:
			s.fg = fmt.Sprintf("p%d", n-90+8)
		case n == 39:
			s.fg = ""
		case n >= 40 && n <= 47:
			s.bg = fmt.Sprintf("p%d", n-40)
		case n >= 100 && n <= 107:
			s.bg = fmt.Sprintf("p%d", n-100+8)
		case n == 49:
			s.bg = ""
		case n == 38 || n == 48 || n == 58:
			var args []string
			if len(sub) > 1 {
				args = sub[1:]
			} else {
				args = ps[i+1:]
			}
			c, used := extendedColor(args, len(sub) > 1)
			if len(sub) == 1 {
				i += used
			}
			switch n {
			case 38:
				s.fg = c
			case 48:
				s.bg = c
			}
		}
	}
}

// extendedColor reads "5;N" or "2;R;G;B" (or their colon forms, which may
// carry a color space id before R) and returns the color and how many
// parameters it used.
func extendedColor(args []string, colon bool) (string, int) {
	num := func(i int) int {
		if i >= len(args) {
			return 0
		}
		v, _ := strconv.Atoi(args[i])
		return v
	}
	if len(args) == 0 {
		return "", 0
	}
	switch args[0] {
	case "5":
		return fmt.Sprintf("p%d", num(1)), 2
	case "2":
		k := 1
		if colon && len(args) >= 5 {
			k = 2
		}
		return fmt.Sprintf("#%02x%02x%02x", num(k), num(k+1), num(k+2)), k + 3
	}
	return "", 1
}

// compareThreeWay compares the lines of xterm.js's dump, tmux's capture
// and the model's dump, and returns the counts and the model's failures.
func compareThreeWay(x *screen.Dump, tm *tmuxScreen, m *screen.Dump) (tmuxCounts, []string) {
	var n tmuxCounts
	var problems []string
	report := func(format string, args ...any) {
		if len(problems) < maxDiffs {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	check := func(where string, xl screen.DumpLine, tl tmuxLine, ml screen.DumpLine) {
		n.Lines++
		if xl.Text() != tl.Text() {
			return
		}
		n.TextAgree++
		cells, sgrOK := attrsAgree(xl, tl)
		if sgrOK {
			n.SGRAgree++
		}
		if ml.Text() != xl.Text() {
			n.ModelText++
			report("%s: text: want %q, got %q", where, xl.Text(), ml.Text())
			return
		}
		if !sgrOK {
			return
		}
		for i := 0; i < cells; i++ {
			xc, mc := cellAt(xl, i), cellAt(ml, i)
			if xc.Fg != mc.Fg || xc.Bg != mc.Bg || xc.F != mc.F {
				n.ModelSGR++
				report("%s column %d (%q): attributes: want fg %q bg %q f %q, got fg %q bg %q f %q",
					where, i, xc.Ch, xc.Fg, xc.Bg, xc.F, mc.Fg, mc.Bg, mc.F)
				break
			}
		}
	}
	if tm.Cols != x.Cols || tm.Rows != x.Rows || len(tm.Screen) != x.Rows {
		n.Unreadable++
		return n, nil
	}
	for i := 0; i < x.Rows; i++ {
		check(fmt.Sprintf("screen line %d", i), x.Screen[i], tm.Screen[i], lineAt(m.Screen, i))
	}
	// The scrollback, aligned at the screen, while both show the normal
	// buffer.
	if !x.Alt && !tm.Alt {
		k := min(len(x.Scrollback), len(tm.History), len(m.Scrollback))
		for i := 1; i <= k; i++ {
			check(fmt.Sprintf("scrollback line -%d", i),
				x.Scrollback[len(x.Scrollback)-i], tm.History[len(tm.History)-i], m.Scrollback[len(m.Scrollback)-i])
		}
	}
	return n, problems
}

// attrsAgree walks xterm.js's cells and tmux's characters together and
// reports whether every cell tmux printed has the same colors and
// attributes in both, and how many cells (counted as in DumpLine.Cells)
// that covers. tmux leaves out trailing blanks, so the cells after its
// last character are not compared.
func attrsAgree(xl screen.DumpLine, tl tmuxLine) (int, bool) {
	k := 0 // next tmux character
	for i, c := range xl.Cells {
		if c.W == 0 {
			continue
		}
		if k >= len(tl) {
			return i, true
		}
		t := tl[k]
		if t.Fg != c.Fg || t.Bg != c.Bg || t.F != c.F {
			return i, false
		}
		for _, r := range c.Ch {
			if k >= len(tl) || tl[k].R != r {
				return i, false
			}
			k++
		}
	}
	// What tmux printed past xterm.js's last cell must be the default
	// blanks that Normalize trimmed.
	for _, t := range tl[k:] {
		if t != (tmuxChar{R: ' '}) {
			return len(xl.Cells), false
		}
	}
	return len(xl.Cells), true
}

func lineAt(lines []screen.DumpLine, i int) screen.DumpLine {
	if i < len(lines) {
		return lines[i]
	}
	return screen.DumpLine{}
}

func cellAt(l screen.DumpLine, i int) screen.DumpCell {
	if i < len(l.Cells) {
		return l.Cells[i]
	}
	return screen.DumpCell{Ch: " ", W: 1}
}
