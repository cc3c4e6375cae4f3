package screen

import "strings"

// Options bound a screen's memory.
type Options struct {
	ScrollbackLines int // lines kept above the screen; 0 means 10000, negative none
	ScrollbackBytes int // bytes of packed scrollback kept; 0 means 4 MiB
}

const (
	defaultScrollbackLines = 10000
	defaultScrollbackBytes = 4 << 20
	maxDim                 = 4096
	// minCols is xterm.js's minimum width: it never has fewer columns.
	minCols = 2
)

// Screen is a headless terminal: feed it a session's output with Write and
// it keeps what a terminal would show. It is not safe for concurrent use.
type Screen struct {
	cols, rows int
	// scrolled counts the lines pushed into the scrollback since the
	// Screen was made or unmarshalled (Scrolled).
	scrolled uint64

	normal, alt *buffer
	cur         *buffer // the active buffer: normal or alt
	sb          scrollback

	attr     style // current SGR attributes and hyperlink
	attrID   uint32
	attrOK   bool
	eraseBg  uint32
	eraseSID uint32
	eraseOK  bool

	styles     styleTable
	combined   []string
	combIndex  map[string]uint32
	links      []hyperlink
	linkIndex  map[hyperlink]uint32
	styleLimit int
	combLimit  int
	linkLimit  int

	modes modes

	gsets   [4]byte // designated character sets, by final byte; 0 is US ASCII
	glevel  uint8
	charset byte // the set in use (xterm.js keeps it apart from gsets[glevel])

	title, icon string
	cwdURI      string // the last OSC 7 URI
	cwd         string

	// prevWidth is xterm.js's precedingJoinState: the width of the last
	// character printed, until anything else happens; a zero-width
	// character joins the cell before it only while it is not 0.
	prevWidth uint8
	inRun     bool // printing a run of characters (see beginRun)

	p      parser
	encBuf []byte // scratch for packing lines

	// epoch and untracked keep the rows' marks of blank cells (see
	// leave): epoch starts at 1, so a row's zero epoch is never the
	// screen's.
	epoch     uint64
	untracked int
}

type modes struct {
	insert         bool // IRM
	newline        bool // LNM (mode 20): xterm.js's convertEol option
	appCursor      bool // DECCKM
	appKeypad      bool // DECKPAM, ?66
	wrap           bool // DECAWM
	origin         bool // DECOM
	reverseWrap    bool // ?45
	bracketedPaste bool
	focus          bool
	sync           bool // ?2026
	hidden         bool // cursor hidden (?25 reset); kept by RIS, as in xterm.js
	mouse          uint8
	mouseEnc       uint8
	mouseUTF8      bool  // ?1005 (xterm.js ignores it; kept for snapshots)
	mouseURXVT     bool  // ?1015 (likewise)
	cursorStyle    uint8 // 0 the viewer's default, else DECSCUSR 1..6 folded: 1 block, 3 underline, 5 bar
	cursorBlink    uint8 // 0 the viewer's default, 1 blinking, 2 steady (DECSCUSR)
	blinkOption    uint8 // ?12: 0 never set, 1 set, 2 reset (an option in xterm.js: RIS keeps it)
}

// Mouse tracking protocols and encodings, as xterm.js names them.
const (
	mouseNone = iota
	mouseX10
	mouseVT200
	mouseDrag
	mouseAny
)

const (
	mouseEncDefault = iota
	mouseEncSGR
	mouseEncSGRPixels
)

// buffer is the normal or the alternate screen buffer.
type buffer struct {
	lines        []line // the screen rows, top first: a window into base (rows.go)
	base         []line
	x, y         int // cursor; x == cols is the pending-wrap state
	top, bottom  int // scroll region, inclusive
	tabs         []uint64
	savedX       int
	savedY       int // absolute: scrollback lines + row, as xterm.js keeps it
	savedFg      uint32
	savedBg      uint32
	savedCharset byte

	// The alternate buffer has no scrollback, but xterm.js sizes its line
	// list by the most rows it had since it was last left (maxLen); while
	// that is more than the rows, lines that scroll off its top are kept
	// (hidden, oldest first) and come back if the screen grows taller.
	hidden []line
	maxLen int
}

// New returns a blank screen of cols x rows (each 1..4096; fewer than 2
// columns become 2, as in xterm.js).
func New(cols, rows int, opts Options) *Screen {
	cols = clampDim(cols, minCols)
	rows = clampDim(rows, 1)
	s := &Screen{cols: cols, rows: rows, modes: modes{wrap: true}, epoch: 1}
	switch {
	case opts.ScrollbackLines == 0:
		s.sb.maxLines = defaultScrollbackLines
	case opts.ScrollbackLines > 0:
		s.sb.maxLines = opts.ScrollbackLines
	}
	s.sb.maxBytes = opts.ScrollbackBytes
	if s.sb.maxBytes <= 0 {
		s.sb.maxBytes = defaultScrollbackBytes
	}
	s.styleLimit, s.combLimit, s.linkLimit = minStyleLimit, minCombLimit, minLinkLimit
	s.p.reset()
	s.normal = &buffer{}
	s.alt = &buffer{}
	s.resetBuffers()
	return s
}

func clampDim(n, lo int) int {
	return min(max(n, lo), maxDim)
}

// resetBuffers makes fresh buffers, as xterm.js's RIS does: an empty normal
// buffer with no scrollback and an unused alternate buffer.
func (s *Screen) resetBuffers() {
	s.sb.clear()
	s.normal = &buffer{}
	s.normal.lines = s.blankLines(s.rows, 0)
	s.normal.bottom = s.rows - 1
	s.normal.setupTabs(s.cols)
	s.alt = &buffer{bottom: s.rows - 1, maxLen: s.rows}
	s.alt.setupTabs(s.cols)
	s.cur = s.normal
}

// blankLines makes n rows of erased cells in style sid, backed by one
// allocation.
func (s *Screen) blankLines(n int, sid uint32) []line {
	cells := make([]cell, n*s.cols)
	fillCells(cells, cell{c: w1, s: sid})
	lines := make([]line, n)
	for i := range lines {
		lines[i].cells = cells[i*s.cols : (i+1)*s.cols : (i+1)*s.cols]
	}
	return lines
}

// Size returns the screen's size.
func (s *Screen) Size() (cols, rows int) { return s.cols, s.rows }

// Title returns the window title set by OSC 0 or OSC 2.
func (s *Screen) Title() string { return s.title }

// Cwd returns the working directory from the last OSC 7 (file://host/path),
// its path percent-decoded, or "" if there was none.
func (s *Screen) Cwd() string { return s.cwd }

// AltScreen reports whether the alternate screen is shown.
func (s *Screen) AltScreen() bool { return s.cur == s.alt }

// InputModes are the modes a program sets that change what the keyboard
// should send it.
type InputModes struct {
	AppCursor      bool // DECCKM: cursor keys send ESC O x
	AppKeypad      bool // DECKPAM
	BracketedPaste bool // a paste arrives between ESC [ 200 ~ and ESC [ 201 ~
}

// InputModes returns the input modes in force.
func (s *Screen) InputModes() InputModes {
	return InputModes{AppCursor: s.modes.appCursor, AppKeypad: s.modes.appKeypad, BracketedPaste: s.modes.bracketedPaste}
}

// Scrolled returns how many lines have been pushed into the scrollback
// since the Screen was made (or unmarshalled): a count that only grows,
// whatever the scrollback keeps, so that the difference between two
// readings is how many lines scrolled away in between.
func (s *Screen) Scrolled() uint64 { return s.scrolled }

// CursorPosition returns the cursor's column and row on the screen (a
// cursor waiting to wrap after the last column reports the last column).
func (s *Screen) CursorPosition() (x, y int) {
	return min(s.cur.x, s.cols-1), s.cur.y
}

// ybase is the number of lines above the active buffer's screen.
func (s *Screen) ybase() int {
	if s.cur == s.normal {
		return s.sb.len()
	}
	return len(s.alt.hidden)
}

// Write feeds terminal output to the screen. It accepts any bytes, split
// anywhere: a UTF-8 character or an escape sequence cut by the end of p
// continues in the next Write. It always returns len(p), nil.
func (s *Screen) Write(p []byte) (int, error) {
	n := len(p)
	// xterm.js parses a write in pieces of at most this many bytes, and a
	// run of printed characters (whose ends get fix-ups) never spans two.
	const piece = 131072
	for len(p) > 0 {
		q := p
		if len(q) > piece {
			q = q[:piece]
		}
		s.parse(q)
		s.endRun()
		p = p[len(q):]
	}
	s.maybeCollect()
	if verifyMarks {
		s.checkMarks()
	}
	return n, nil
}

// checkMarks checks the mark of every row (contentEnd panics at a wrong
// one).
func (s *Screen) checkMarks() {
	for _, b := range []*buffer{s.normal, s.alt} {
		for i := range b.hidden {
			s.contentEnd(&b.hidden[i])
		}
		for i := range b.lines {
			s.contentEnd(&b.lines[i])
		}
	}
}

// parse runs the bytes through the UTF-8 decoder and the parser.
func (s *Screen) parse(data []byte) {
	i := 0
	if s.p.utf8n > 0 {
		i = s.finishUTF8(data)
	}
	for i < len(data) {
		b := data[i]
		if s.p.state == stGround {
			if b >= 0x20 && b < 0x7f {
				if slowPaths {
					i++
					s.advance(rune(b))
					continue
				}
				j := i + 1 + asciiRun(data[i+1:])
				s.printASCII(data[i:j])
				i = j
				continue
			}
			if b < 0x80 {
				i++
				s.endRun()
				switch b {
				case 0x1b:
					s.p.state = stEscape
					s.p.collect = 0
					s.p.p.reset()
				case 0x7f:
					// Ignored (a parse error in xterm.js), without resetting
					// the join state.
				default:
					s.execute(b)
				}
				continue
			}
		} else if b < 0x80 {
			if (s.p.state == stCSIParam || s.p.state == stCSIEntry) && !slowPaths {
				if n := s.csiParams(data[i:]); n > 0 {
					i += n
					continue
				}
			}
			i++
			s.advance(rune(b))
			continue
		}
		cp, n := decodeUTF8(data[i:])
		if n == 0 {
			// A character cut by the end of data: keep its bytes.
			k := copy(s.p.utf8[:], data[i:])
			s.p.utf8n = uint8(k)
			return
		}
		i += n
		if cp < 0 {
			continue
		}
		if cp >= nonASCII && s.p.state == stGround {
			s.putRune(cp)
			continue
		}
		s.advance(cp)
	}
}

// csiParams reads the parameter bytes (digits, ';' and ':') that p starts
// with in a CSI sequence, in one loop rather than through the table a
// byte each, and returns how many it read. Each does what the table
// says: acParam, then stCSIParam.
func (s *Screen) csiParams(p []byte) int {
	n := 0
	for ; n < len(p); n++ {
		switch c := p[n]; {
		case c-'0' <= 9:
			s.p.p.digit(int32(c - '0'))
		case c == ';':
			s.p.p.add(0)
		case c == ':':
			s.p.p.addSub(-1)
		default:
			return n
		}
		s.p.state = stCSIParam
	}
	return n
}

// finishUTF8 completes a character whose first bytes ended the previous
// Write, and returns how many bytes of data it used.
func (s *Screen) finishUTF8(data []byte) int {
	var buf [4]byte
	k := copy(buf[:], s.p.utf8[:s.p.utf8n])
	need := utf8Len(buf[0])
	used := 0
	for k < need && used < len(data) {
		buf[k] = data[used]
		k++
		used++
	}
	cp, n := decodeUTF8(buf[:k])
	if n == 0 {
		// Still cut short.
		copy(s.p.utf8[:], buf[:k])
		s.p.utf8n = uint8(k)
		return used
	}
	s.p.utf8n = 0
	// Bytes of buf past the decoded (or dropped) prefix came from data and
	// are parsed again from there.
	used -= k - n
	if cp >= 0 {
		if cp >= nonASCII && s.p.state == stGround {
			s.putRune(cp)
		} else {
			s.advance(cp)
		}
	}
	return used
}

func utf8Len(b byte) int {
	switch {
	case b&0xE0 == 0xC0:
		return 2
	case b&0xF0 == 0xE0:
		return 3
	case b&0xF8 == 0xF0:
		return 4
	}
	return 1
}

// decodeUTF8 decodes the character at the start of b as xterm.js's decoder
// does. It returns the code point and the bytes it used; a code point of
// -1 means the bytes are dropped (an invalid sequence, a surrogate, a
// byte-order mark); n == 0 means b ends inside a character.
func decodeUTF8(b []byte) (cp rune, n int) {
	b0 := b[0]
	switch {
	case b0 < 0x80:
		return rune(b0), 1
	case b0&0xE0 == 0xC0:
		if len(b) < 2 {
			return 0, 0
		}
		if b[1]&0xC0 != 0x80 {
			return -1, 1
		}
		cp = rune(b0&0x1F)<<6 | rune(b[1]&0x3F)
		if cp < 0x80 {
			// Overlong: xterm.js rereads the second byte, a stray
			// continuation byte, which it then drops too.
			return -1, 2
		}
		return cp, 2
	case b0&0xF0 == 0xE0:
		if len(b) < 2 {
			return 0, 0
		}
		if b[1]&0xC0 != 0x80 {
			return -1, 1
		}
		if len(b) < 3 {
			return 0, 0
		}
		if b[2]&0xC0 != 0x80 {
			return -1, 2
		}
		cp = rune(b0&0x0F)<<12 | rune(b[1]&0x3F)<<6 | rune(b[2]&0x3F)
		if cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFEFF {
			return -1, 3
		}
		return cp, 3
	case b0&0xF8 == 0xF0:
		for k := 1; k < 4; k++ {
			if len(b) <= k {
				return 0, 0
			}
			if b[k]&0xC0 != 0x80 {
				return -1, k
			}
		}
		cp = rune(b0&0x07)<<18 | rune(b[1]&0x3F)<<12 | rune(b[2]&0x3F)<<6 | rune(b[3]&0x3F)
		if cp < 0x10000 || cp > 0x10FFFF {
			return -1, 4
		}
		return cp, 4
	}
	return -1, 1
}

// advance runs one code point through the parser, outside the ground
// state's fast paths.
func (s *Screen) advance(cp rune) {
	code := cp
	if code > nonASCII {
		code = nonASCII
	}
	p := &s.p
	t := transitions[p.state][code]
	action, next := t>>4, t&0xF
	if action != acPrint {
		s.endRun()
	}
	switch action {
	case acPrint:
		if cp < 0x80 && !slowPaths {
			s.printASCII([]byte{byte(cp)})
		} else {
			s.putRune(cp)
		}
	case acExecute:
		s.execute(byte(cp))
	case acCSIDispatch:
		if id := p.collect<<8 | uint32(cp); id == 'm' {
			s.csiDispatch(id) // SGR: no cell changes
		} else {
			s.leave()
			s.csiDispatch(id)
			s.back()
		}
		s.prevWidth = 0
	case acParam:
		switch cp {
		case ';':
			p.p.add(0)
		case ':':
			p.p.addSub(-1)
		default:
			p.p.digit(int32(cp - '0'))
		}
	case acCollect:
		p.collect = p.collect<<8 | uint32(cp)
	case acESCDispatch:
		s.leave()
		s.escDispatch(p.collect<<8 | uint32(cp))
		s.back()
		s.prevWidth = 0
	case acClear:
		p.p.reset()
		p.collect = 0
	case acOSCStart:
		p.oscStartString()
	case acOSCPut:
		p.oscPut(cp)
	case acOSCEnd:
		s.leave()
		s.oscEnd(cp != 0x18 && cp != 0x1a)
		s.back()
		p.p.reset()
		p.collect = 0
		s.prevWidth = 0
		if cp == 0x1b {
			next = stEscape
		}
	case acDCSUnhook:
		p.p.reset()
		p.collect = 0
		s.prevWidth = 0
		if cp == 0x1b {
			next = stEscape
		}
	}
	// A handler may have reset the parser (RIS); the table's next state
	// stands, as in xterm.js.
	p.state = next
}

// oscEnd dispatches a finished OSC string.
func (s *Screen) oscEnd(ok bool) {
	p := &s.p
	defer func() {
		p.osc = oscStart
		if cap(p.oscData) > 4096 {
			p.oscData = nil
		}
	}()
	if !ok || p.osc == oscStart || p.osc == oscAbort || p.oscLong {
		return
	}
	if p.osc == oscID && !handledOSC(p.oscID) {
		return
	}
	data := string(p.oscData)
	if p.osc == oscID {
		data = ""
	}
	switch p.oscID {
	case 0:
		s.title, s.icon = data, data
	case 1:
		s.icon = data
	case 2:
		s.title = data
	case 7:
		s.setCwd(data)
	case 8:
		s.setHyperlink(data)
	case 133:
		s.shellMark(data)
	}
}

// setCwd takes an OSC 7 URI: file://host/path, the path percent-encoded.
func (s *Screen) setCwd(uri string) {
	const scheme = "file://"
	if len(uri) < len(scheme) || !strings.EqualFold(uri[:len(scheme)], scheme) {
		return
	}
	rest := uri[len(scheme):]
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return
	}
	path := rest[i:]
	if j := strings.IndexAny(path, "?#"); j >= 0 {
		path = path[:j]
	}
	dec, ok := percentDecode(path)
	if !ok {
		return
	}
	s.cwdURI = uri
	s.cwd = dec
}

func percentDecode(p string) (string, bool) {
	if !strings.Contains(p, "%") {
		return p, true
	}
	b := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b = append(b, p[i])
			continue
		}
		if i+2 >= len(p) {
			return "", false
		}
		h, ok1 := unhex(p[i+1])
		l, ok2 := unhex(p[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		b = append(b, h<<4|l)
		i += 2
	}
	return string(b), true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// setHyperlink is OSC 8: "params;uri" opens a link, ";" closes it.
func (s *Screen) setHyperlink(data string) {
	i := strings.IndexByte(data, ';')
	if i < 0 {
		return
	}
	par, uri := strings.TrimSpace(data[:i]), data[i+1:]
	if uri == "" {
		if par != "" {
			return
		}
		s.attr.link = 0
		s.attr.updateExt()
		s.attrOK = false
		return
	}
	var id string
	for _, f := range strings.Split(par, ":") {
		if v, ok := strings.CutPrefix(f, "id="); ok {
			id = v
			break
		}
	}
	s.attr.link = s.linkFor(hyperlink{id: id, uri: uri})
	s.attr.updateExt()
	s.attrOK = false
}

// shellMark records an OSC 133 mark on the cursor's row.
func (s *Screen) shellMark(data string) {
	if data == "" {
		return
	}
	var m uint8
	switch data[0] {
	case 'A':
		m = markPrompt
	case 'B':
		m = markCommand
	case 'C':
		m = markOutput
	case 'D':
		m = markDone
	default:
		return
	}
	s.cur.lines[s.cur.y].marks |= m
}
