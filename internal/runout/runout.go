// Package runout reads the output of one command run in a session (termkeep
// run) from the session's output stream: where it starts and ends, by the
// shell integration's marks (Marked) or by markers the run prints itself
// (Markers), its exit status, and its text as a terminal shows it
// (TextFilter). It does no I/O but writing the text to the writer given.
package runout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"

	"termkeep/internal/shellmark"
	"termkeep/internal/vtscan"
)

// Reader reads a command's output from the session's stream, in order
// from the offset the run started at, and says when it has ended.
type Reader interface {
	// Write takes the output at off, writes the command's output in it
	// to out as text, and reports done with the command's exit code once
	// its end is read (err when its status cannot be known).
	Write(off uint64, p []byte, out io.Writer) (code int, done bool, err error)
}

var (
	_ Reader = (*Marked)(nil)
	_ Reader = (*Markers)(nil)
)

// Typed is what Markers' run types for line: line between a printf of the
// start marker and a printf of the end marker with line's status (status:
// the shell's name for it, $? or fish's $status). The printf formats hold
// %s where the markers hold the token, so the shell's echo of the typed
// line is never taken for a marker.
func Typed(line, token, status string) string {
	return fmt.Sprintf("printf '__tk_start_%%s__\\n' %s; %s; printf '\\n__tk_end_%%s_%%d__\\n' %s %s", token, line, token, status)
}

// Marked finds the command's start (C) and end (D) marks in the output
// after the offset run started at, and prints the text between them (or,
// with Raw, the bytes).
type Marked struct {
	// Raw writes the output's bytes as the terminal got them, escape
	// sequences and control characters included, instead of its text.
	Raw bool
	// PromptSP says that the shell is zsh: what its PROMPT_SP option
	// prints when a command's output ends (promptSP) comes before the end
	// mark, and is left out of the output.
	PromptSP bool

	scan       shellmark.Scanner
	from       uint64
	start, end uint64 // [start, end) is the output; end is max until D
	started    bool
	ended      *shellmark.Mark
	text       TextFilter
	// held is the output's last line without its line break, at held0:
	// kept back until the end mark shows whether it ends in zsh's mark
	// (or in the first bytes of the end mark itself).
	held  []byte
	held0 uint64
}

// NewMarked reads the command whose C mark is the first at or after from,
// in a terminal cols wide.
func NewMarked(from uint64, cols int) *Marked {
	r := &Marked{from: from, end: ^uint64(0), text: TextFilter{Cols: cols}}
	r.scan.Emit = func(m shellmark.Mark) {
		switch {
		case m.Kind == shellmark.Exec && !r.started && m.At >= r.from:
			r.started, r.start, r.held0 = true, m.End, m.End
		case m.Kind == shellmark.Done && r.started && r.ended == nil:
			r.ended, r.end = &m, m.At
		}
	}
	return r
}

// maxHeld bounds the bytes held back: zsh's mark is a row of blanks, the
// mark's text and its escape sequences.
func (r *Marked) maxHeld() int { return 4*r.text.width() + 1024 }

func (r *Marked) Write(off uint64, p []byte, out io.Writer) (int, bool, error) {
	r.scan.Write(off, time.Time{}, p)
	if r.started {
		lo, hi := max(off, r.start, r.held0+uint64(len(r.held))), off+uint64(len(p))
		if lo < hi {
			r.held = append(r.held, p[lo-off:hi-off]...)
		}
	}
	if r.ended == nil {
		// Up to the last line break, and all but the last maxHeld bytes,
		// can be no part of the end.
		n := bytes.LastIndexByte(r.held, '\n') + 1
		n = max(n, len(r.held)-r.maxHeld())
		if n > 0 {
			if err := r.emit(r.held[:n], out); err != nil {
				return 0, true, err
			}
			r.held0 += uint64(n)
			r.held = append(r.held[:0], r.held[n:]...)
		}
		return 0, false, nil
	}
	r.held = r.held[:min(uint64(len(r.held)), r.end-min(r.end, r.held0))]
	if r.PromptSP {
		n := promptSP(r.held, r.text.width())
		r.held = r.held[:len(r.held)-n]
		r.end -= uint64(n)
	}
	if err := r.emit(r.held, out); err != nil {
		return 0, true, err
	}
	r.held0, r.held = r.held0+uint64(len(r.held)), r.held[:0]
	if !r.Raw {
		out.Write(r.text.Flush())
	}
	if r.ended.Status == nil {
		return 1, true, errors.New("the shell did not report the command's exit status")
	}
	return statusCode(*r.ended.Status), true, nil
}

func (r *Marked) emit(p []byte, out io.Writer) error {
	if !r.Raw {
		p = r.text.Filter(p)
	}
	if len(p) == 0 {
		return nil
	}
	_, err := out.Write(p)
	return err
}

// promptSP returns how many bytes at the end of p zsh printed for its
// PROMPT_SP option, 0 if p does not end so. After a command zsh prints,
// before its precmd hooks (Src/utils.c, preprompt): PROMPT_EOL_MARK
// expanded (w columns: "%" or "#" in bold standout by default), blanks to
// the row's end (cols-w-1 of them, or cols-w on a terminal without
// pending wrap), CR, w blanks, CR. After output that ends a line it blanks
// a row the prompt then takes; after output that does not, the blanks
// wrap and the mark stays behind the output's last line.
func promptSP(p []byte, cols int) int {
	i := len(p)
	back := func(b byte) int { // blanks before i, then b
		n := 0
		for i > 0 && p[i-1] == ' ' {
			i, n = i-1, n+1
		}
		if i == 0 || p[i-1] != b {
			return -1
		}
		i--
		return n
	}
	if i == 0 || p[i-1] != '\r' {
		return 0
	}
	i--
	w := back('\r')
	if w < 0 {
		return 0
	}
	k := 0
	for i > 0 && p[i-1] == ' ' {
		i, k = i-1, k+1
	}
	if k+w != cols-1 && k+w != cols {
		return 0
	}
	// The mark: w characters, with SGR sequences around and between them.
	// The program's own output may end in a reset (ESC [ m, ESC [ 0 m):
	// the mark starts with attributes set, so a reset before it is the
	// program's.
	for cells := 0; ; {
		if n := sgrBefore(p[:i]); n > 0 {
			if cells == w && isReset(p[i-n:i]) {
				break
			}
			i -= n
			continue
		}
		if cells == w {
			break
		}
		r, size := utf8.DecodeLastRune(p[:i])
		if size == 0 || r < 0x20 || r == 0x7f || r == utf8.RuneError && size == 1 {
			return 0
		}
		i, cells = i-size, cells+1
	}
	return len(p) - i
}

// sgrBefore is the length of the SGR sequence (ESC [ params m) that ends
// p, 0 if none does.
func sgrBefore(p []byte) int {
	if len(p) < 3 || p[len(p)-1] != 'm' {
		return 0
	}
	for j := len(p) - 2; j >= 1; j-- {
		switch c := p[j]; {
		case c >= '0' && c <= '9' || c == ';' || c == ':':
		case c == '[' && p[j-1] == 0x1b:
			return len(p) - j + 1
		default:
			return 0
		}
	}
	return 0
}

func isReset(seq []byte) bool {
	return string(seq) == "\x1b[m" || string(seq) == "\x1b[0m"
}

// Range returns the command's output in the log, [start, end): ok once
// its start mark was read; end is max until its end mark is.
func (r *Marked) Range() (start, end uint64, ok bool) { return r.start, r.end, r.started }

// statusCode is the exit code that passes a command's status on.
func statusCode(st int) int {
	if st < 0 || st > 255 {
		return 1
	}
	return st
}

// Whole reads a session whose program is the command (a shell's -c): all
// its output is the command's, as text or, with Raw, as bytes. Its end is
// the session's exit, which the caller reads; Flush ends the text.
type Whole struct {
	Raw  bool
	text TextFilter
}

var _ Reader = (*Whole)(nil)

// NewWhole reads a session's output in a terminal cols wide.
func NewWhole(cols int) *Whole { return &Whole{text: TextFilter{Cols: cols}} }

func (r *Whole) Write(_ uint64, p []byte, out io.Writer) (int, bool, error) {
	if !r.Raw {
		p = r.text.Filter(p)
	}
	_, err := out.Write(p)
	return 0, err != nil, err
}

// Flush writes the last line when it has no line break.
func (r *Whole) Flush(out io.Writer) error {
	if r.Raw {
		return nil
	}
	_, err := out.Write(r.text.Flush())
	return err
}

// Markers finds the lines the typed printfs print around the command's
// output, in a shell that reports no marks.
type Markers struct {
	startLine string
	endRE     *regexp.Regexp
	text      TextFilter
	line      []byte // the text of the line being read
	started   bool
	held      []byte // the last whole line of output, printed once the next one comes
	hasHeld   bool
}

// NewMarkers reads the output between the markers of token (Typed), in a
// terminal cols wide.
func NewMarkers(token string, cols int) *Markers {
	return &Markers{
		text:      TextFilter{Cols: cols},
		startLine: "__tk_start_" + token + "__",
		endRE:     regexp.MustCompile(`^__tk_end_` + token + `_(\d+)__$`),
	}
}

func (r *Markers) Write(_ uint64, p []byte, out io.Writer) (int, bool, error) {
	for _, b := range r.text.Filter(p) {
		if b != '\n' {
			r.line = append(r.line, b)
			continue
		}
		l := bytes.TrimRight(r.line, "\r")
		r.line = r.line[:0]
		if !r.started {
			r.started = string(bytes.TrimSpace(l)) == r.startLine
			continue
		}
		if m := r.endRE.FindSubmatch(bytes.TrimSpace(l)); m != nil {
			// The printf's own line break comes before the marker: the
			// line held is the output's last, unless it is that break's.
			if r.hasHeld && len(r.held) > 0 {
				out.Write(append(r.held, '\n'))
			}
			st, _ := strconv.Atoi(string(m[1]))
			return statusCode(st), true, nil
		}
		if r.hasHeld {
			if _, err := out.Write(append(r.held, '\n')); err != nil {
				return 0, true, err
			}
		}
		r.held, r.hasHeld = append(r.held[:0], l...), true
	}
	return 0, false, nil
}

// TextFilter turns terminal output into the text a terminal of width
// cols shows for it, as the program wrote it: escape sequences dropped; a
// CR returns to the start of the row, so what follows overwrites it
// (progress bars); a backspace moves back; a long line wraps at cols and
// is kept as one line. Tabs stay tabs and blanks the program wrote stay,
// at a line's end too: only what the program wrote over is changed.
type TextFilter struct {
	Cols     int // the terminal's width (80 when 0)
	seq      vtscan.Scanner
	utf      []byte // an incomplete UTF-8 sequence
	line     []rune // the line's cells: characters, tab and tabCell, hole
	rowStart int    // index in line of the row the cursor is on
	col      int
	buf      []byte
}

// Cells of TextFilter.line that hold no character of their own.
const (
	hole    rune = -1 // skipped over (by a backspace, say), never written
	tabCell rune = -2 // after a '\t' cell: the blank columns of its tab
)

// Filter returns the lines p completes, each with its line break. The
// slice is valid until the next call.
func (t *TextFilter) Filter(p []byte) []byte {
	t.buf = t.buf[:0]
	for _, b := range p {
		if t.seq.Step(b) != vtscan.Text {
			continue
		}
		if b < 0x80 {
			t.flushUTF()
		}
		switch {
		case b == '\n':
			t.endLine()
		case b == '\r':
			t.col = 0
		case b == '\b':
			t.col = max(t.col-1, 0)
		case b == '\t':
			t.tab()
		case b < 0x20 || b == 0x7f:
		case b < 0x80:
			t.put(rune(b))
		default:
			if len(t.utf) > 0 && !utf8.RuneStart(b) || len(t.utf) == 0 {
				t.utf = append(t.utf, b)
			} else {
				t.flushUTF()
				t.utf = append(t.utf, b)
			}
			if utf8.FullRune(t.utf) {
				t.flushUTF()
			}
		}
	}
	return t.buf
}

// flushUTF puts the UTF-8 sequence collected: its character, or U+FFFD
// for each byte that starts none.
func (t *TextFilter) flushUTF() {
	for len(t.utf) > 0 {
		r, n := utf8.DecodeRune(t.utf)
		t.put(r)
		t.utf = t.utf[n:]
	}
	t.utf = t.utf[:0]
}

func (t *TextFilter) width() int {
	if t.Cols <= 0 {
		return 80
	}
	return t.Cols
}

// tab moves to the next tab stop (every 8 columns, the last column at
// most). At the line's end it writes a tab; over text it only moves, as
// on a terminal.
func (t *TextFilter) tab() {
	if t.col >= t.width() {
		return // a tab in the last column stays there
	}
	stop := min((t.col/8+1)*8, t.width())
	i := t.rowStart + t.col
	if i < len(t.line) {
		t.col = min(stop, t.width()-1)
		return
	}
	t.put('\t')
	for ; t.col < stop; t.col++ {
		t.line = append(t.line, tabCell)
	}
}

// put writes r at the cursor, wrapping at the row's end.
func (t *TextFilter) put(r rune) {
	if t.col >= t.width() {
		t.rowStart += t.width()
		t.col = 0
	}
	i := t.rowStart + t.col
	for len(t.line) < i {
		t.line = append(t.line, hole)
	}
	if i < len(t.line) {
		t.untab(i)
		t.line[i] = r
	} else {
		t.line = append(t.line, r)
	}
	t.col++
}

// untab turns the tab that covers cell i, if one does, into blanks: a
// character written into it splits it.
func (t *TextFilter) untab(i int) {
	if t.line[i] != '\t' && t.line[i] != tabCell {
		return
	}
	j := i
	for j > 0 && t.line[j] == tabCell {
		j--
	}
	for t.line[j] = ' '; j+1 < len(t.line) && t.line[j+1] == tabCell; j++ {
		t.line[j+1] = ' '
	}
}

// text appends the line's text to buf.
func (t *TextFilter) text() {
	for _, r := range t.line {
		switch r {
		case tabCell:
		case hole:
			t.buf = append(t.buf, ' ')
		default:
			t.buf = utf8.AppendRune(t.buf, r)
		}
	}
	t.line, t.rowStart, t.col = t.line[:0], 0, 0
}

func (t *TextFilter) endLine() {
	t.text()
	t.buf = append(t.buf, '\n')
}

// Flush returns the last line when it has no line break.
func (t *TextFilter) Flush() []byte {
	t.flushUTF()
	t.buf = t.buf[:0]
	t.text()
	return t.buf
}
