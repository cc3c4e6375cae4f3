package screen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// The checkpoint format: a magic string, a version byte, then the model's
// fields as unsigned varints, strings (a varint length and bytes) and
// packed lines (see encodeLine). Styles, strings and hyperlinks are inline,
// so the format does not depend on how the tables are numbered. A new
// version gets a new number; UnmarshalBinary rejects the ones it does not
// know.
const (
	checkpointMagic   = "termkeep-screen"
	checkpointVersion = 1
)

// ErrCheckpoint is wrapped by the errors UnmarshalBinary returns for input
// that is not a checkpoint it can read.
var ErrCheckpoint = errors.New("screen: bad checkpoint")

// MarshalBinary returns a checkpoint of the whole screen: both buffers,
// the scrollback, modes, character sets, tab stops, saved cursors, title,
// working directory, hyperlinks and the parser's state between Writes.
// UnmarshalBinary of it gives a screen that behaves the same from then on.
func (s *Screen) MarshalBinary() ([]byte, error) { return s.marshal(nil, 0), nil }

// AppendBinary appends MarshalBinary's checkpoint to b
// (encoding.BinaryAppender): a caller that frames the checkpoint puts its
// header first and makes no second copy of it.
func (s *Screen) AppendBinary(b []byte) ([]byte, error) { return s.marshal(b, 0), nil }

// MarshalTrimmed is MarshalBinary of the screen as TrimScrollback(n) would
// leave it, with the screen itself left as it is: a checkpoint that keeps
// only recent history, without a copy of the whole screen to trim.
func (s *Screen) MarshalTrimmed(n int) ([]byte, error) {
	return s.marshal(nil, max(s.sb.len()-max(n, 0), 0)), nil
}

// marshal appends to b the screen without its oldest drop lines of
// history, as TrimScrollback leaves it when it drops them. It makes room
// for all of it at once: a busy screen's checkpoint is a megabyte, and
// growing to that by doubling copied it over and over.
func (s *Screen) marshal(b []byte, drop int) []byte {
	defer s.sb.release() // the history read cache
	e := &encoder{s: s, drop: drop, b: slices.Grow(b, s.marshalSize(drop))}
	e.b = append(e.b, checkpointMagic...)
	e.b = append(e.b, checkpointVersion)
	e.int(s.cols)
	e.int(s.rows)
	maxLines := s.sb.maxLines
	if drop > 0 {
		maxLines = s.sb.len() - drop
	}
	e.int(maxLines)
	e.int(s.sb.maxBytes)
	m := s.modes
	var flags uint64
	for i, on := range []bool{m.insert, m.newline, m.appCursor, m.appKeypad, m.wrap, m.origin, m.reverseWrap,
		m.bracketedPaste, m.focus, m.sync, m.hidden, m.mouseUTF8, m.mouseURXVT} {
		if on {
			flags |= 1 << i
		}
	}
	e.uint(flags)
	e.b = append(e.b, m.mouse, m.mouseEnc, m.cursorStyle, m.cursorBlink, m.blinkOption)
	e.b = append(e.b, s.gsets[:]...)
	e.b = append(e.b, s.glevel, s.charset, s.prevWidth)
	e.str(s.title)
	e.str(s.icon)
	e.str(s.cwdURI)
	e.str(s.cwd)
	e.b = s.appendStyle(e.b, s.attr)
	e.parser(&s.p)
	active := byte(0)
	if s.cur == s.alt {
		active = 1
	}
	e.b = append(e.b, active)
	e.buffer(s.normal)
	e.buffer(s.alt)
	n := s.sb.len()
	e.int(n - drop)
	for i := drop; i < n; i++ {
		l := s.sb.line(i)
		e.int(len(l))
		e.b = append(e.b, l...)
	}
	return e.b
}

// marshalSize is a generous estimate of what marshal(drop) appends: the
// kept share of the packed history (whose count of bytes includes an
// index entry per line, more than the line's length prefix takes), and the
// rows of both buffers at a byte a cell plus their headers.
func (s *Screen) marshalSize(drop int) int {
	history := s.sb.bytes
	if n := s.sb.len(); n > 0 && drop > 0 {
		history = int(int64(history) * int64(max(n-drop, 0)) / int64(n))
	}
	rows := len(s.normal.lines) + len(s.normal.hidden) + len(s.alt.lines) + len(s.alt.hidden)
	return 1<<10 + len(s.title) + len(s.icon) + len(s.cwdURI) + len(s.cwd) + history + rows*(s.cols+16)
}

type encoder struct {
	s    *Screen
	b    []byte
	drop int // history lines left out (marshal)
}

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int)     { e.b = binary.AppendUvarint(e.b, uint64(v)) }
func (e *encoder) str(v string)  { e.b = appendString(e.b, v) }
func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) parser(p *parser) {
	e.b = append(e.b, p.state)
	e.uint(uint64(p.collect))
	e.int(p.p.n)
	for i := 0; i < p.p.n; i++ {
		e.int(int(p.p.v[i]))
		e.int(int(p.p.subIdx[i]))
	}
	e.int(p.p.nsub)
	for i := 0; i < p.p.nsub; i++ {
		e.int(int(p.p.sub[i]) + 1) // in int: a sub-parameter may be maxParam
	}
	e.bool(p.p.reject)
	e.bool(p.p.rejectS)
	e.bool(p.p.inSub)
	e.b = append(e.b, p.osc)
	e.int(p.oscID + 1)
	e.bool(p.oscKeep)
	e.bool(p.oscLong)
	e.str(string(p.oscData))
	e.str(string(p.utf8[:p.utf8n]))
}

func (e *encoder) buffer(b *buffer) {
	e.int(b.x)
	e.int(b.y)
	e.int(b.top)
	e.int(b.bottom)
	e.int(len(b.tabs))
	for _, t := range b.tabs {
		e.uint(t)
	}
	e.int(b.savedX)
	if b == e.s.normal {
		// An absolute line: it moves up with the history left out.
		e.int(max(b.savedY-e.drop, 0))
	} else {
		e.int(b.savedY)
	}
	e.uint(uint64(b.savedFg))
	e.uint(uint64(b.savedBg))
	e.b = append(e.b, b.savedCharset)
	e.int(b.maxLen)
	e.lines(b.hidden)
	e.lines(b.lines)
}

func (e *encoder) lines(lines []line) {
	e.int(len(lines))
	for i := range lines {
		l := &lines[i]
		e.int(len(l.cells))
		start := len(e.b)
		e.b = append(e.b, 0, 0, 0, 0) // length, patched below
		e.b = e.s.encodeLine(e.b, l)
		binary.BigEndian.PutUint32(e.b[start:], uint32(len(e.b)-start-4))
	}
}

// UnmarshalBinary replaces the screen with a checkpoint from
// MarshalBinary. It rejects input that is not a whole, valid checkpoint of
// a version it knows (the screen is then unchanged) and never panics.
func (s *Screen) UnmarshalBinary(data []byte) error {
	if len(data) < len(checkpointMagic)+1 || string(data[:len(checkpointMagic)]) != checkpointMagic {
		return fmt.Errorf("%w: not a screen checkpoint", ErrCheckpoint)
	}
	if v := data[len(checkpointMagic)]; v != checkpointVersion {
		return fmt.Errorf("%w: version %d, this build reads version %d", ErrCheckpoint, v, checkpointVersion)
	}
	d := &decoder{b: data[len(checkpointMagic)+1:]}
	n, err := readCheckpoint(d)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	*s = *n
	// Rows read back know no marks of blank cells (see leave), whatever
	// reading them did.
	s.epoch, s.untracked = n.epoch+1, 0
	return nil
}

func readCheckpoint(d *decoder) (*Screen, error) {
	cols := d.int(maxDim)
	rows := d.int(maxDim)
	if d.err != nil || cols < minCols || rows < 1 || rows*5 > len(d.b) {
		return nil, errors.New("bad size")
	}
	n := New(cols, rows, Options{})
	n.sb.maxLines = d.int(1 << 31)
	n.sb.maxBytes = d.int(1 << 40)
	if n.sb.maxBytes <= 0 {
		return nil, errors.New("bad scrollback limit")
	}
	flags := d.uvarint()
	m := &n.modes
	for i, f := range []*bool{&m.insert, &m.newline, &m.appCursor, &m.appKeypad, &m.wrap, &m.origin, &m.reverseWrap,
		&m.bracketedPaste, &m.focus, &m.sync, &m.hidden, &m.mouseUTF8, &m.mouseURXVT} {
		*f = flags&(1<<i) != 0
	}
	m.mouse = d.byte()
	m.mouseEnc = d.byte()
	m.cursorStyle = d.byte()
	m.cursorBlink = d.byte()
	m.blinkOption = d.byte()
	if m.mouse > mouseAny || m.mouseEnc > mouseEncSGRPixels || m.cursorStyle > 6 || m.cursorBlink > 2 || m.blinkOption > 2 {
		return nil, errors.New("bad modes")
	}
	for i := range n.gsets {
		n.gsets[i] = d.byte()
		if n.gsets[i] != 0 && charsets[n.gsets[i]] == nil {
			return nil, errors.New("bad character set")
		}
	}
	n.glevel = d.byte()
	n.charset = d.byte()
	n.prevWidth = d.byte()
	if n.glevel > 3 || (n.charset != 0 && charsets[n.charset] == nil) || n.prevWidth > 2 {
		return nil, errors.New("bad character set state")
	}
	n.title = d.string(maxOSC)
	n.icon = d.string(maxOSC)
	n.cwdURI = d.string(maxOSC)
	n.cwd = d.string(maxOSC)
	n.attr = n.decodeStyle(d)
	if err := readParser(d, &n.p); err != nil {
		return nil, err
	}
	active := d.byte()
	if active > 1 {
		return nil, errors.New("bad active buffer")
	}
	if err := n.readBuffer(d, n.normal, false); err != nil {
		return nil, err
	}
	if err := n.readBuffer(d, n.alt, true); err != nil {
		return nil, err
	}
	if n.alt.maxLen < rows || n.normal.maxLen > maxDim {
		return nil, errors.New("bad line capacity")
	}
	if active == 1 {
		if len(n.alt.lines) == 0 {
			return nil, errors.New("alternate buffer shown without lines")
		}
		n.cur = n.alt
	}
	count := d.int(len(d.b))
	var l line
	for i := 0; i < count && d.err == nil; i++ {
		enc := d.bytes(len(d.b))
		if err := n.decodeLine(enc, cols, &l); err != nil {
			return nil, err
		}
		n.sb.push(enc)
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, errors.New("trailing bytes")
	}
	n.attrOK, n.eraseOK = false, false
	n.collect()
	return n, nil
}

func readParser(d *decoder, p *parser) error {
	p.state = d.byte()
	p.collect = d.u32()
	p.p.n = d.int(maxParams)
	for i := 0; i < p.p.n; i++ {
		p.p.v[i] = int32(d.int(maxParam))
		p.p.subIdx[i] = uint16(d.int(0xFFFF))
	}
	p.p.nsub = d.int(maxSubParams)
	for i := 0; i < p.p.nsub; i++ {
		p.p.sub[i] = int32(d.int(maxParam+1)) - 1
	}
	p.p.reject = d.byte() != 0
	p.p.rejectS = d.byte() != 0
	p.p.inSub = d.byte() != 0
	p.osc = d.byte()
	p.oscID = d.int(1e9+1) - 1
	p.oscKeep = d.byte() != 0
	p.oscLong = d.byte() != 0
	p.oscData = []byte(d.string(maxOSC))
	u := d.bytes(3)
	if d.err != nil {
		return d.err
	}
	if p.state >= numStates || p.osc > oscAbort {
		return errors.New("bad parser state")
	}
	for i := 0; i < p.p.n; i++ {
		s, e := int(p.p.subIdx[i]>>8), int(p.p.subIdx[i]&0xFF)
		if s > e || e > p.p.nsub {
			return errors.New("bad parameters")
		}
	}
	if len(u) > 0 {
		if u[0] < 0xC0 || u[0] > 0xF7 || len(u) >= utf8Len(u[0]) {
			return errors.New("bad UTF-8 state")
		}
		for _, c := range u[1:] {
			if c&0xC0 != 0x80 {
				return errors.New("bad UTF-8 state")
			}
		}
	}
	p.utf8n = uint8(copy(p.utf8[:], u))
	return nil
}

func (s *Screen) readBuffer(d *decoder, b *buffer, alt bool) error {
	b.x = d.int(s.cols + 1)
	b.y = d.int(s.rows - 1)
	b.top = d.int(s.rows - 1)
	b.bottom = d.int(s.rows - 1)
	nt := d.int(maxDim/64 + 2)
	b.tabs = make([]uint64, nt)
	for i := range b.tabs {
		b.tabs[i] = d.uvarint()
	}
	b.savedX = d.int(maxDim + 1)
	b.savedY = d.int(1 << 40)
	b.savedFg = d.u32()
	b.savedBg = d.u32()
	b.savedCharset = d.byte()
	if b.savedCharset != 0 && charsets[b.savedCharset] == nil {
		return errors.New("bad saved character set")
	}
	if b.top >= b.bottom && !(b.top == 0 && b.bottom == 0) {
		return errors.New("bad scroll region")
	}
	b.maxLen = d.int(maxDim)
	hidden, err := s.readLines(d, alt)
	if err != nil {
		return err
	}
	if len(hidden) > 0 && (!alt || len(hidden) > b.maxLen-s.rows) {
		return errors.New("bad hidden lines")
	}
	b.hidden = hidden
	lines, err := s.readLines(d, alt)
	if err != nil {
		return err
	}
	if len(lines) != s.rows && !(alt && len(lines) == 0 && len(hidden) == 0) {
		return errors.New("bad number of rows")
	}
	b.lines, b.base = lines, nil
	return nil
}

func (s *Screen) readLines(d *decoder, alt bool) ([]line, error) {
	nl := d.int(maxDim)
	if d.err != nil {
		return nil, d.err
	}
	if nl > len(d.b)/5 { // each row takes at least 5 bytes
		return nil, errors.New("bad number of rows")
	}
	var lines []line
	if nl > 0 {
		lines = s.blankLines(nl, 0)
	}
	b := &buffer{lines: lines}
	for i := 0; i < nl; i++ {
		width := d.int(maxDim)
		if len(d.b) < 4 {
			d.fail()
		}
		if d.err != nil {
			return nil, d.err
		}
		size := int(binary.BigEndian.Uint32(d.b))
		d.b = d.b[4:]
		if size > len(d.b) || width < s.cols || (width != s.cols && !alt) {
			return nil, errors.New("bad row")
		}
		enc := d.b[:size]
		d.b = d.b[size:]
		if width != s.cols {
			b.lines[i].cells = nil
		}
		if err := s.decodeLine(enc, width, &b.lines[i]); err != nil {
			return nil, err
		}
	}
	return lines, d.err
}
