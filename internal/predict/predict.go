// Package predict decides what a terminal client may show of the user's
// typing before the session's echo of it arrives, as mosh does (Winstein
// and Balakrishnan, USENIX ATC 2012). It is the Go twin of the page's
// web/src/predict.ts: the same rules, checked against the same traces
// (testdata/traces.json), so `termkeep attach` and the browser predict
// alike.
//
// A Predictor is a pure, single-threaded state machine with the clock
// passed in: the caller feeds it keys, the screen after each output it
// drew, the session's modes and the measured round trip, and draws View
// over the terminal (underlined) until the echo confirms or replaces it.
//
// When in doubt it predicts nothing. Never at a password prompt (the pty's
// echo off with line editing on), on the alternate screen, with mouse
// tracking, for a paste, or while the pty's mode is unknown; only at a
// shell's prompt (its shell integration says so) or, without one, after
// several keys in a row were echoed as predicted. A prediction the screen
// contradicts, or whose echo does not come in time, is rolled back, and
// prediction pauses until the screen settles. Only typing at the end of a
// line is predicted: a printable character, a backspace over what was
// typed, and the left and right arrows over it when a line editor (not
// the pty) edits the line.
package predict

import (
	"slices"
	"time"
	"unicode/utf8"
)

// Setting says when to predict.
type Setting int

const (
	Never  Setting = iota // the zero Setting: nothing is predicted
	Auto                  // when the round trip is above the threshold
	Always                // whatever the round trip
)

// TermMode is the pty's input mode, as a term-mode frame says it.
type TermMode struct{ Echo, Canonical bool }

// Shell is what the shell's integration marks say it is doing.
type Shell int

const (
	ShellUnknown Shell = iota // no marks seen
	ShellPrompt               // at its prompt: typing goes to its line editor
	ShellRunning              // a command runs
)

// Modes is what the client knows of the session's state.
type Modes struct {
	AltScreen bool      // a full-screen program
	Mouse     bool      // the program tracks the mouse
	TermMode  *TermMode // nil while unknown
	Shell     Shell
}

// Screen is the terminal's screen as drawn now. Rows stay put while the
// screen scrolls where the caller can say so; Cell returns a cell's
// characters, " " for an empty one.
type Screen interface {
	Cursor() (row, col int)
	Cols() int
	Cell(row, col int) string
}

// Cell is one predicted cell.
type Cell struct {
	Row, Col int
	Char     string
}

// View is what to draw over the terminal: predicted cells, and the cursor
// where the prediction puts it (Cursor false: where it is).
type View struct {
	Cells                []Cell
	Cursor               bool
	CursorRow, CursorCol int
}

// Options tune a Predictor.
type Options struct {
	Setting Setting
	// Threshold: above this round trip, Auto predicts.
	Threshold time.Duration
	// Confidence is how many keys in a row must echo as predicted before
	// predictions are shown without shell integration.
	Confidence int
}

// Defaults are the page's.
var Defaults = Options{Setting: Auto, Threshold: 30 * time.Millisecond, Confidence: 3}

// Stats counts keys typed, shown predictions, those the echo confirmed,
// those the screen contradicted (Wrong), and those taken back because
// their echo was overdue (Late: a slow link or machine, not a wrong guess).
type Stats struct{ Keys, Shown, Confirmed, Wrong, Late int }

// MaxPending bounds the predictions pending at once: past it a key is not
// predicted (a user does not type that far ahead of a live echo).
const MaxPending = 256

// How many echo delays the expiry looks back on, and the most it takes of
// each; how many correction times are kept.
const (
	echoSamples     = 16
	echoMax         = 3 * time.Second
	correctionsKept = 256
)

// step is one predicted key: the cell it changes (if any) and where it
// leaves the cursor.
type step struct {
	cell     *Cell
	before   string // the cell's characters before this step, as predicted
	row, col int
	// fromRow, fromCol: where the cursor was before it.
	fromRow, fromCol int
	shown            bool // shown (not a tentative one, made to earn confidence)
	// cellsOnly: a key that could not be predicted followed it, so the
	// cursor after it cannot be checked.
	cellsOnly bool
	expires   time.Time
	at        time.Time
	epoch     int
}

type lineSpan struct{ row, start, end int }

// Predictor is one terminal's predictive echo. Use it from one goroutine.
type Predictor struct {
	opts  Options
	rtt   time.Duration
	rttOK bool
	modes Modes
	steps []step
	// earned: keys in a row echoed as predicted (without shell integration).
	earned int
	// epoch counts the new lines and control keys typed without shell
	// integration: only the echo of a key typed since the last one earns
	// confidence (the program now reading may not echo; mosh's epochs).
	epoch int
	// echoes: the last echo delays, and the time an overdue echo had been
	// waited for: a slow machine or link waits longer.
	echoes []time.Duration
	// pausedUntil: no new prediction before it (a rollback's pause), nor
	// while barrier is set.
	pausedUntil time.Time
	barrier     bool
	// unseen: a key not predicted was sent then (zero: none since the
	// screen showed its effect).
	unseen time.Time
	// awaitPrompt: a new line or a control key was typed at a prompt;
	// nothing shows until the shell draws its next prompt.
	awaitPrompt bool
	// line: the columns typed on the cursor's line since it was last
	// unpredictable; what backspace and the arrows may cross.
	line *lineSpan
	// Stats are the counts so far.
	Stats Stats
	// Corrections: how long each of the last shown predictions rolled
	// back was shown.
	Corrections []time.Duration
}

// New returns a Predictor; a zero Threshold or Confidence takes Defaults'.
func New(opts Options) *Predictor {
	if opts.Threshold == 0 {
		opts.Threshold = Defaults.Threshold
	}
	if opts.Confidence == 0 {
		opts.Confidence = Defaults.Confidence
	}
	return &Predictor{opts: opts}
}

// SetSetting changes the setting; Never drops what is pending.
func (p *Predictor) SetSetting(s Setting) {
	p.opts.Setting = s
	if s == Never {
		p.drop()
	}
}

// SetRTT records the measured round trip.
func (p *Predictor) SetRTT(d time.Duration) {
	if d >= 0 {
		p.rtt, p.rttOK = d, true
	}
}

// RTT returns the round trip last recorded (ok false: none).
func (p *Predictor) RTT() (d time.Duration, ok bool) { return p.rtt, p.rttOK }

// SetModes takes the session's modes; a mode that forbids prediction drops
// the pending ones.
func (p *Predictor) SetModes(m Modes) {
	if m.TermMode != nil {
		tm := *m.TermMode
		m.TermMode = &tm
	}
	p.modes = m
	if p.forbidden() {
		p.drop()
	}
}

// Modes returns the modes last set.
func (p *Predictor) Modes() Modes { return p.modes }

// Prompt says the shell has drawn a new prompt (its integration's mark).
func (p *Predictor) Prompt() { p.awaitPrompt = false }

// Key takes what the user typed (one read of the terminal), with the
// screen as it is before it is sent.
func (p *Predictor) Key(data string, now time.Time, scr Screen) {
	// The terminal's focus reports change nothing on the screen.
	if data == "\x1b[I" || data == "\x1b[O" {
		return
	}
	p.Stats.Keys++
	var s *step
	if p.allowed(now) && len(p.steps) < MaxPending {
		s = p.predictKey(data, now, scr)
	}
	if s == nil {
		p.unpredictable(data)
		p.unseen = now
		return
	}
	p.steps = append(p.steps, *s)
	if s.shown {
		p.Stats.Shown++
	}
}

// Screen takes the screen after output was drawn: it confirms, keeps or
// rolls back the predictions.
func (p *Predictor) Screen(now time.Time, scr Screen) {
	// Output while paused keeps the pause going; once it has ended, output
	// (the echo of what is predicted now) must not bring it back.
	if now.Before(p.pausedUntil) {
		p.pausedUntil = later(p.pausedUntil, now.Add(p.settle()))
	} else {
		p.pausedUntil = time.Time{}
	}
	if !p.unseen.IsZero() && now.Sub(p.unseen) >= p.echoFloor() {
		p.unseen = time.Time{}
	}
	if len(p.steps) == 0 {
		p.barrier = false
		return
	}
	j := p.matched(scr, now)
	if j < 0 {
		p.rollback(now, false)
		return
	}
	for _, s := range p.steps[:j] {
		if s.shown {
			p.Stats.Confirmed++
		}
		if s.epoch == p.epoch {
			p.earned++
		}
		p.echoed(now.Sub(s.at))
	}
	p.steps = slices.Delete(p.steps, 0, j)
	if len(p.steps) == 0 {
		p.barrier = false
	}
}

// Tick rolls back predictions whose echo is overdue; call it at Deadline.
func (p *Predictor) Tick(now time.Time) {
	if len(p.steps) == 0 {
		return
	}
	due, first := false, p.steps[0].at
	for _, s := range p.steps {
		due = due || !now.Before(s.expires)
		if s.at.Before(first) {
			first = s.at
		}
	}
	if !due {
		return
	}
	// A machine or link this slow keeps its echoes this late for a while:
	// the next predictions wait longer instead of rolling back each time.
	p.echoed(now.Sub(first))
	p.rollback(now, true)
}

// Deadline is when Tick has something to do (ok false: nothing pending).
func (p *Predictor) Deadline() (t time.Time, ok bool) {
	for i, s := range p.steps {
		if i == 0 || s.expires.Before(t) {
			t = s.expires
		}
	}
	return t, len(p.steps) > 0
}

// Pending says whether predictions wait for their echo.
func (p *Predictor) Pending() int { return len(p.steps) }

// View returns what to draw over the terminal.
func (p *Predictor) View() View {
	var v View
	for _, s := range p.steps {
		if !s.shown {
			continue
		}
		if s.cell != nil {
			i := slices.IndexFunc(v.Cells, func(c Cell) bool { return c.Row == s.cell.Row && c.Col == s.cell.Col })
			if i < 0 {
				v.Cells = append(v.Cells, *s.cell)
			} else {
				v.Cells[i] = *s.cell
			}
		}
		v.Cursor, v.CursorRow, v.CursorCol = !s.cellsOnly, s.row, s.col
	}
	return v
}

func (p *Predictor) forbidden() bool {
	m := p.modes
	return p.opts.Setting == Never || m.AltScreen || m.Mouse || m.TermMode == nil ||
		!m.TermMode.Echo && m.TermMode.Canonical || m.Shell == ShellRunning
}

// allowed says whether a new key may be predicted now (tentatively or shown).
func (p *Predictor) allowed(now time.Time) bool {
	if p.forbidden() || p.barrier || now.Before(p.pausedUntil) {
		return false
	}
	if !p.unseen.IsZero() && now.Before(p.unseen.Add(p.expiry())) {
		return false
	}
	if p.opts.Setting == Always {
		return true
	}
	return p.rttOK && p.rtt > p.opts.Threshold
}

func (p *Predictor) predictKey(data string, now time.Time, scr Screen) *step {
	row, col := scr.Cursor()
	cols := scr.Cols()
	if n := len(p.steps); n > 0 {
		row, col = p.steps[n-1].row, p.steps[n-1].col
	} else if p.line != nil && (p.line.row != row || col < p.line.start || col > p.line.end) {
		p.line = nil
	}
	at := func(r, c int) string {
		if v, ok := p.predictedCell(r, c); ok {
			return v
		}
		return scr.Cell(r, c)
	}
	restBlank := func(from int) bool {
		for c := from; c < cols; c++ {
			if at(row, c) != " " {
				return false
			}
		}
		return true
	}
	base := step{
		fromRow: row, fromCol: col,
		expires: now.Add(p.expiry()), at: now, epoch: p.epoch,
	}
	// At a prompt the shell's marks decide, not confidence earned on a
	// line already sent.
	if p.modes.Shell == ShellPrompt {
		base.shown = !p.awaitPrompt
	} else {
		base.shown = p.earned >= p.opts.Confidence
	}
	editor := !p.modes.TermMode.Canonical // a line editor draws the line, not the pty
	line := lineSpan{row, col, col}
	if p.line != nil {
		line = *p.line
	}
	s := base
	switch {
	case printable(data):
		// At the end of the line only, and never into the last column (the
		// wrap is the terminal's).
		if col < 0 || col >= cols-1 || !restBlank(col) {
			return nil
		}
		p.line = &lineSpan{row, line.start, col + 1}
		s.cell, s.before, s.row, s.col = &Cell{row, col, data}, at(row, col), row, col+1
	case data == "\x7f" || data == "\b":
		if col <= line.start || col != line.end || !restBlank(col) {
			return nil
		}
		p.line = &lineSpan{row, line.start, col - 1}
		s.cell, s.before, s.row, s.col = &Cell{row, col - 1, " "}, at(row, col-1), row, col-1
	case editor && (data == "\x1b[D" || data == "\x1bOD"):
		if col <= line.start {
			return nil
		}
		p.line = &line
		s.row, s.col = row, col-1
	case editor && (data == "\x1b[C" || data == "\x1bOC"):
		if col >= line.end {
			return nil
		}
		p.line = &line
		s.row, s.col = row, col+1
	default:
		return nil
	}
	return &s
}

// predictedCell is a cell as the pending predictions leave it (ok false:
// none touches it).
func (p *Predictor) predictedCell(r, c int) (v string, ok bool) {
	for _, s := range p.steps {
		if s.cell != nil && s.cell.Row == r && s.cell.Col == c {
			v, ok = s.cell.Char, true
		}
	}
	return v, ok
}

// unpredictable handles a key that was not predicted: what follows it is
// not known until its effect is seen.
func (p *Predictor) unpredictable(data string) {
	editing := data == "\x7f" || data == "\b" || data == "\x1b[C" || data == "\x1b[D" ||
		data == "\x1bOC" || data == "\x1bOD" || printable(data)
	p.line = nil
	for i := range p.steps {
		p.steps[i].cellsOnly = true
	}
	if len(p.steps) > 0 {
		p.barrier = true
	}
	if !editing && p.modes.Shell != ShellPrompt {
		// A new line, a control key, a paste: the next program may not
		// echo (mosh's epochs).
		p.earned = min(p.earned, p.opts.Confidence-1)
		p.epoch++
	}
	// A line sent or a control key (Tab completes in place) at a prompt: a
	// command may now read a password before its mode is known. Not the
	// keys a line editor edits its line with (Ctrl+U kills it, Ctrl+W a
	// word, Ctrl+A/E/B/F move, Ctrl+K kills the rest): no command runs,
	// the editor still reads this line, and what is typed next is
	// predicted once their effect is seen.
	if p.modes.Shell == ShellPrompt && sendsLine(data) && !lineEditKey(data) {
		p.awaitPrompt = true
	}
}

// sendsLine reports what the page's /[\r\n]|^[\x00-\x08\x0a-\x1f]$/ does:
// a new line anywhere in data, or data one control key (not Tab).
func sendsLine(data string) bool {
	for i := 0; i < len(data); i++ {
		if data[i] == '\r' || data[i] == '\n' {
			return true
		}
	}
	return len(data) == 1 && data[0] < 0x20 && data[0] != '\t'
}

// lineEditKey: Ctrl+A, B, E, F, K, U and W, a line editor's keys that edit
// the line it reads and run nothing.
func lineEditKey(data string) bool {
	if len(data) != 1 {
		return false
	}
	switch data[0] {
	case 0x01, 0x02, 0x05, 0x06, 0x0b, 0x15, 0x17:
		return true
	}
	return false
}

// printable reports whether data is one character the page predicts: one
// cell wide, in the scripts whose width is sure.
func printable(data string) bool {
	r, n := utf8.DecodeRuneInString(data)
	if n != len(data) || r == utf8.RuneError {
		return false
	}
	return r >= 0x20 && r <= 0x7e || r >= 0xa0 && r <= 0x2ff || r >= 0x370 && r <= 0x1fff
}

// matched is how many of the pending steps the screen shows done: the most
// j such that every cell they touch reads as after the first j steps, and
// the cursor is where the j-th left it; -1 when no j fits. A key typed
// then erased leaves the screen as before it, so the steps whose echo
// could have come by now (typed most of a round trip ago) are tried first:
// else the echo of an older key would confirm them. Younger ones only when
// nothing else fits (the link got faster than the round trip measured).
func (p *Predictor) matched(scr Screen, now time.Time) int {
	floor := p.echoFloor()
	old := 0
	for old < len(p.steps) && now.Sub(p.steps[old].at) >= floor {
		old++
	}
	for j := old; j >= 0; j-- {
		if p.fits(j, scr) {
			return j
		}
	}
	for j := len(p.steps); j > old; j-- {
		if p.fits(j, scr) {
			return j
		}
	}
	return -1
}

// fits says whether the screen shows the first j pending steps done and
// the others not.
func (p *Predictor) fits(j int, scr Screen) bool {
	// Steps checked by their cells only may be confirmed before their echo
	// (a space over a blank reads as typed): the cursor then tells nothing
	// of them, nor of the one after them (j = 0).
	check, row, col := false, 0, 0
	if j > 0 {
		prev := p.steps[j-1]
		check, row, col = !prev.cellsOnly, prev.row, prev.col
	} else {
		first := p.steps[0]
		check, row, col = !first.cellsOnly, first.fromRow, first.fromCol
	}
	if check {
		if r, c := scr.Cursor(); r != row || c != col {
			return false
		}
	}
	return p.cellsAsAfter(j, scr)
}

// cellsAsAfter says whether every cell the steps touch reads as the first
// j steps leave it.
func (p *Predictor) cellsAsAfter(j int, scr Screen) bool {
	type pos struct{ r, c int }
	want := make(map[pos]string, len(p.steps))
	var order []pos
	for i, s := range p.steps {
		if s.cell == nil {
			continue
		}
		k := pos{s.cell.Row, s.cell.Col}
		_, seen := want[k]
		if !seen {
			order = append(order, k)
		}
		// Done: the last done step's character; pending: what the first
		// pending one found there.
		switch {
		case i < j:
			want[k] = s.cell.Char
		case !seen:
			want[k] = s.before
		}
	}
	for _, k := range order {
		if scr.Cell(k.r, k.c) != want[k] {
			return false
		}
	}
	return true
}

// rollback takes the pending predictions back: late says their echo was
// overdue, else the screen contradicted them.
func (p *Predictor) rollback(now time.Time, late bool) {
	for _, s := range p.steps {
		if !s.shown {
			continue
		}
		if late {
			p.Stats.Late++
		} else {
			p.Stats.Wrong++
		}
		p.Corrections = append(p.Corrections, now.Sub(s.at))
		if len(p.Corrections) > correctionsKept {
			p.Corrections = p.Corrections[1:]
		}
	}
	p.steps = p.steps[:0]
	p.line = nil
	p.barrier = false
	p.earned = 0
	p.pausedUntil = now.Add(p.settle())
}

// drop forgets the pending predictions without counting them wrong: a
// mode forbids them.
func (p *Predictor) drop() {
	p.steps = p.steps[:0]
	p.line = nil
	p.barrier = false
	p.earned = 0
}

// echoFloor is how soon the echo of a key can come: most of the round trip.
func (p *Predictor) echoFloor() time.Duration { return p.rtt * 3 / 4 }

// echoed records how long an echo took (or was waited for in vain).
func (p *Predictor) echoed(d time.Duration) {
	p.echoes = append(p.echoes, min(max(d, 0), echoMax))
	if len(p.echoes) > echoSamples {
		p.echoes = p.echoes[1:]
	}
}

// expiry is how long an echo may take: past it, the prediction is wrong.
// The round trip, or the slowest recent echo when slower.
func (p *Predictor) expiry() time.Duration {
	slowest := p.rtt
	for _, e := range p.echoes {
		slowest = max(slowest, e)
	}
	return max(250*time.Millisecond, slowest*3/2+250*time.Millisecond)
}

// settle is how long the screen must be still after a rollback before
// predicting again.
func (p *Predictor) settle() time.Duration { return max(100*time.Millisecond, 2*p.rtt) }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
