package screen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
)

// scrollback holds the lines that scrolled off the top of the normal
// buffer, oldest first, each packed (see encodeLine) into byte chunks that
// hold no pointers. Lines are appended to the newest chunk, the open one;
// a full chunk is sealed, and sealed chunks are compressed (S2), oldest
// first: terminal text packs several times smaller, and history is read
// rarely (a snapshot, a resize, a checkpoint) and then mostly in order, one
// chunk decompressed at a time. Compression waits until more than
// rawBudget of sealed chunks are raw, or until compact: a flood of output
// drops its lines from a full history soon after they arrive, so most of
// them are never compressed. The session's model compacts a busy screen
// every second and a quiet one once, so a session that prints slowly
// keeps little raw. It drops its oldest lines to stay within a number of
// lines and of bytes (uncompressed).
type scrollback struct {
	chunks    [][]byte // chunks[0] is chunk number chunkBase; chunks[:packed] are S2 blocks
	packed    int
	chunkBase uint32
	refs      []sbRef // refs[head:] are the lines, oldest first
	head      int
	bytes     int // packed bytes plus sbRefSize per line
	maxLines  int
	maxBytes  int
	// dropped counts the lines dropped from the top to stay within
	// maxLines and maxBytes (never reset, not by clear either: lines a
	// program erased are not counted).
	dropped int
	// spare is the buffer of the last raw chunk dropped, for the next
	// chunk to open in.
	spare []byte
	// cache is the decompressed form of sealed chunk cacheOf, while the
	// lines are being read; push and release give it back.
	cache   []byte
	cacheOf uint32
	cached  bool
}

type sbRef struct {
	chunk uint32 // absolute chunk number
	off   uint32
	n     uint32
}

const (
	sbRefSize    = 12
	minChunkSize = 1 << 10
	maxChunkSize = 64 << 10
	// rawBudget is how many bytes of sealed chunks may wait raw for
	// compression: the default history (10,000 lines) of plain output,
	// packed, fits in it.
	rawBudget = 1 << 20
)

// Buffers for compressing a chunk and for the decompressed chunk a reader
// holds, shared by every screen: a session's history costs its compressed
// size, not a chunk-sized buffer more.
var (
	sbEncodeBufs = sync.Pool{New: func() any { b := make([]byte, s2.MaxEncodedLen(maxChunkSize)); return &b }}
	sbCacheBufs  = sync.Pool{New: func() any { b := make([]byte, 0, maxChunkSize); return &b }}
)

func (sb *scrollback) len() int { return len(sb.refs) - sb.head }

// line returns the packed bytes of line i (0 is the oldest), or nil if
// they cannot be read back. The slice aliases the store or the read
// cache: callers must not keep it across another call on sb.
func (sb *scrollback) line(i int) []byte {
	r := sb.refs[sb.head+i]
	c := sb.chunk(r.chunk)
	if c == nil {
		return nil
	}
	return c[r.off : r.off+r.n]
}

// chunk returns the uncompressed contents of chunk k.
func (sb *scrollback) chunk(k uint32) []byte {
	i := int(k - sb.chunkBase)
	if i >= sb.packed {
		return sb.chunks[i]
	}
	if sb.cached && sb.cacheOf == k {
		return sb.cache
	}
	if sb.cache == nil {
		sb.cache = *sbCacheBufs.Get().(*[]byte)
	}
	sb.cached = false
	n, err := s2.DecodedLen(sb.chunks[i])
	if err != nil {
		return nil
	}
	if cap(sb.cache) < n {
		sb.cache = make([]byte, n)
	}
	d, err := s2.Decode(sb.cache[:n], sb.chunks[i])
	if err != nil {
		return nil
	}
	sb.cache, sb.cacheOf, sb.cached = d, k, true
	return d
}

// release gives back the read cache.
func (sb *scrollback) release() {
	if sb.cache != nil {
		if cap(sb.cache) == maxChunkSize {
			b := sb.cache[:0]
			sbCacheBufs.Put(&b)
		}
		sb.cache, sb.cached = nil, false
	}
}

// pack compresses the oldest raw chunk, which must be sealed, and keeps
// its buffer as the spare.
func (sb *scrollback) pack() {
	raw := sb.chunks[sb.packed]
	sb.chunks[sb.packed] = compress(raw)
	sb.packed++
	sb.keep(raw)
}

// keep makes a raw chunk's buffer the spare, if it is a full-sized one.
func (sb *scrollback) keep(raw []byte) {
	if cap(raw) == maxChunkSize {
		sb.spare = raw[:0]
	}
}

// compact compresses every sealed chunk.
func (sb *scrollback) compact() {
	sb.release()
	if n := len(sb.chunks); n > 0 {
		sb.packOver(0, n-1)
	}
	sb.spare = nil
}

// compress returns the S2 block of raw, in a slice of its own.
func compress(raw []byte) []byte {
	p := sbEncodeBufs.Get().(*[]byte)
	if n := s2.MaxEncodedLen(len(raw)); len(*p) < n {
		*p = make([]byte, n)
	}
	c := bytes.Clone(s2.Encode(*p, raw))
	sbEncodeBufs.Put(p)
	return c
}

// push appends a packed line and drops the oldest lines past the limits.
func (sb *scrollback) push(enc []byte) {
	sb.release()
	if sb.maxLines <= 0 || len(enc)+sbRefSize > sb.maxBytes {
		sb.dropped += sb.len() + 1
		sb.clear()
		return
	}
	n := len(sb.chunks)
	if n == 0 || len(sb.chunks[n-1])+len(enc) > cap(sb.chunks[n-1]) {
		size := minChunkSize
		if n > 0 {
			size = min(2*cap(sb.chunks[n-1]), maxChunkSize)
			sb.packOver(rawBudget, n) // chunk n-1 is sealed now
		}
		size = max(size, len(enc))
		if cap(sb.spare) >= size && cap(sb.spare) <= 2*size {
			sb.chunks = append(sb.chunks, sb.spare)
		} else {
			sb.chunks = append(sb.chunks, make([]byte, 0, size))
		}
		sb.spare = nil
		n++
	}
	c := sb.chunks[n-1]
	sb.refs = append(sb.refs, sbRef{chunk: sb.chunkBase + uint32(n-1), off: uint32(len(c)), n: uint32(len(enc))})
	sb.chunks[n-1] = append(c, enc...)
	sb.bytes += len(enc) + sbRefSize
	for sb.len() > sb.maxLines || sb.bytes > sb.maxBytes {
		sb.dropOldest()
	}
}

// clearWrapped clears the wrapped flag of line i.
func (sb *scrollback) clearWrapped(i int) {
	r := sb.refs[sb.head+i]
	k := int(r.chunk - sb.chunkBase)
	c := sb.chunk(r.chunk)
	if c == nil || c[r.off]&1 == 0 {
		return
	}
	c[r.off] &^= 1
	if k < sb.packed {
		// A sealed chunk: c is the cache; compress it again.
		sb.chunks[k] = compress(c)
	}
}

// packOver compresses the oldest of the sealed chunks, chunks[:sealed],
// while those left raw hold more than budget bytes.
func (sb *scrollback) packOver(budget, sealed int) {
	raw := 0
	for _, c := range sb.chunks[sb.packed:sealed] {
		raw += len(c)
	}
	for raw > budget && sb.packed < sealed {
		raw -= len(sb.chunks[sb.packed])
		sb.pack()
	}
}

func (sb *scrollback) dropOldest() {
	sb.dropped++
	r := sb.refs[sb.head]
	sb.head++
	sb.bytes -= int(r.n) + sbRefSize
	if sb.head == len(sb.refs) {
		sb.clear()
		return
	}
	// Free the chunks that no remaining line uses.
	next := sb.refs[sb.head].chunk
	for sb.chunkBase < next {
		if sb.cached && sb.cacheOf == sb.chunkBase {
			sb.cached = false
		}
		if sb.packed > 0 {
			sb.packed--
		} else {
			sb.keep(sb.chunks[0])
		}
		sb.chunks[0] = nil
		m := copy(sb.chunks, sb.chunks[1:])
		sb.chunks[m] = nil
		sb.chunks = sb.chunks[:m]
		sb.chunkBase++
	}
	if sb.head > 64 && sb.head > len(sb.refs)/2 {
		m := copy(sb.refs, sb.refs[sb.head:])
		sb.refs = sb.refs[:m]
		sb.head = 0
	}
}

func (sb *scrollback) clear() {
	sb.release()
	sb.chunks, sb.packed, sb.spare = nil, 0, nil
	sb.refs = nil
	sb.head = 0
	sb.bytes = 0
	sb.chunkBase = 0
}

// memory is the heap the scrollback holds, in bytes.
func (sb *scrollback) memory() int {
	n := cap(sb.refs)*sbRefSize + cap(sb.cache) + cap(sb.spare)
	for _, c := range sb.chunks {
		n += cap(c)
	}
	return n
}

// A packed line is a header byte (bit 0: wrapped; bits 1-4: OSC 133
// marks) and runs of cells in one style, up to the last cell that is not
// blank (the rest of the row is blank). A run is its number of cells, its
// style, inline (see appendStyle), and its cells:
//
//	0x20-0x7e   that ASCII character, width 1
//	0x00        an erased cell
//	0x01 cp     a wide character and its continuation cell (2 cells)
//	0x02 w cp   any cell: code point (0 for none) and width
//	0x03 w s    a cell holding several code points: width, string
//	0x04 s      the same, wide, and its continuation cell (2 cells)
//	0x05        a continuation cell on its own
//	0x06 cp     a character of width 1
//
// Numbers are unsigned varints, strings a varint length and bytes. Styles,
// strings and links are inline so that scrollback does not pin entries of
// the screen's tables.
const (
	pkNull     = 0x00
	pkWide     = 0x01
	pkAny      = 0x02
	pkComb     = 0x03
	pkCombWide = 0x04
	pkCont     = 0x05
	pkNarrow   = 0x06
)

// trimmedEnd is the length of row without its trailing blank cells. Most
// of a wide terminal's rows are mostly blank: 32 cells a step (the
// runtime's vectorized compare of memory), then four, each an 8-byte
// compare the compiler keeps inline, then one.
func trimmedEnd(row []cell) int {
	end := len(row)
	for end >= len(blankCells) && *(*[len(blankCells)]cell)(row[end-len(blankCells) : end]) == blankCells {
		end -= len(blankCells)
	}
	for end >= 4 {
		q := row[end-4 : end : end]
		if q[0] != blankCell || q[1] != blankCell || q[2] != blankCell || q[3] != blankCell {
			break
		}
		end -= 4
	}
	for end > 0 && row[end-1].isBlank() {
		end--
	}
	return end
}

// blankCells is the run of blank cells trimmedEnd compares at once.
var blankCells = func() (run [32]cell) {
	fillCells(run[:], blankCell)
	return run
}()

// encodeLine appends the packed form of a row.
func (s *Screen) encodeLine(b []byte, l *line) []byte {
	b, _ = s.encodeLineEnd(b, l)
	return b
}

// encodeLineEnd is encodeLine that also returns the length of the row
// without its trailing blank cells.
//
// A run's length comes first in the packed form, but the run is found
// while its cells are packed, in one pass over them: room for the length
// is kept for the longest run the rest of the row allows, and what is
// packed after it moves back when the run is shorter and its length
// needs fewer bytes (never, on a row of fewer than 128 cells).
func (s *Screen) encodeLineEnd(b []byte, l *line) ([]byte, int) {
	h := byte(0)
	if l.wrapped {
		h = 1
	}
	h |= l.marks << 1
	b = append(b, h)
	row := l.cells
	end := trimmedEnd(row[:s.contentEnd(l)])
	var lenBuf [binary.MaxVarintLen64]byte
	for i := 0; i < end; {
		sid := row[i].s
		at := len(b)
		room := len(binary.AppendUvarint(lenBuf[:0], uint64(end-i)))
		b = append(b, lenBuf[:room]...)
		if sid == 0 {
			b = append(b, 0) // the default style: no fields
		} else {
			b = s.appendStyle(b, s.styles.get(sid))
		}
		j := i
		for {
			// Printable ASCII of width 1 in the run's style, the common
			// case: a byte each, stored into room grown for the rest of
			// the row.
			src := row[j:end]
			b = slices.Grow(b, len(src))
			n := len(b)
			dst := b[n : n+len(src)]
			// A cell as one word, its style above its content: one
			// subtraction and one compare test both.
			base := uint64(sid)<<32 | w1 | 0x20
			m := 0
			for ; m < len(src); m++ {
				v := uint64(src[m].c) | uint64(src[m].s)<<32 - base
				if v >= 0x5F {
					break
				}
				dst[m] = byte(v + 0x20)
			}
			b = b[:n+m]
			if j += m; j == end || row[j].s != sid {
				break
			}
			b, j = s.appendCell(b, row, j, end)
		}
		n := binary.PutUvarint(lenBuf[:], uint64(j-i))
		copy(b[at:], lenBuf[:n])
		if n < room {
			b = append(b[:at+n], b[at+room:]...)
		}
		i = j
	}
	return b, end
}

// appendCell appends the packed form of row[k], a cell that encodeLineEnd
// does not pack itself (it is not printable ASCII of width 1) in a run of
// the style of row[k] that ends at end or at the first cell of another
// style, and returns the index of the next cell: a wide character takes
// its continuation with it when that is in the run.
func (s *Screen) appendCell(b []byte, row []cell, k, end int) ([]byte, int) {
	c := row[k]
	cp := c.c & cpMask
	w := c.width()
	contNext := k+1 < end && row[k+1].c == 0 && row[k+1].s == c.s
	switch {
	case c.c&combFlag != 0:
		str := s.cellString(c)
		if w == 2 && contNext {
			b = append(b, pkCombWide)
			k++
		} else {
			b = append(b, pkComb, byte(w))
		}
		b = binary.AppendUvarint(b, uint64(len(str)))
		b = append(b, str...)
	case w == 1 && cp == 0:
		b = append(b, pkNull)
	case w == 1:
		b = append(b, pkNarrow)
		b = binary.AppendUvarint(b, uint64(cp))
	case w == 2 && cp != 0 && contNext:
		b = append(b, pkWide)
		b = binary.AppendUvarint(b, uint64(cp))
		k++
	case c.c == 0:
		b = append(b, pkCont)
	default:
		b = append(b, pkAny, byte(w))
		b = binary.AppendUvarint(b, uint64(cp))
	}
	return b, k + 1
}

// Style fields present in an inline style, in a leading mask byte.
const (
	stFg = 1 << iota
	stBg
	stUlColor
	stUlStyle
	stLink
)

func (s *Screen) appendStyle(b []byte, st style) []byte {
	var m byte
	if st.fg != 0 {
		m |= stFg
	}
	if st.bg != 0 {
		m |= stBg
	}
	if st.ulColor != 0 {
		m |= stUlColor
	}
	if st.ulStyle != 0 {
		m |= stUlStyle
	}
	l := s.linkOf(st)
	if st.link != 0 {
		m |= stLink
	}
	b = append(b, m)
	if m&stFg != 0 {
		b = binary.AppendUvarint(b, uint64(st.fg))
	}
	if m&stBg != 0 {
		b = binary.AppendUvarint(b, uint64(st.bg))
	}
	if m&stUlColor != 0 {
		b = binary.AppendUvarint(b, uint64(st.ulColor))
	}
	if m&stUlStyle != 0 {
		b = append(b, st.ulStyle)
	}
	if m&stLink != 0 {
		b = appendString(b, l.id)
		b = appendString(b, l.uri)
	}
	return b
}

func appendString(b []byte, str string) []byte {
	b = binary.AppendUvarint(b, uint64(len(str)))
	return append(b, str...)
}

var errPacked = errors.New("screen: corrupt packed line")

// decoder reads packed data, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errPacked
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// int reads a varint that must be at most max.
func (d *decoder) int(max int) int {
	v := d.uvarint()
	if v > uint64(max) {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *decoder) u32() uint32 {
	v := d.uvarint()
	if v > 0xFFFFFFFF {
		d.fail()
		return 0
	}
	return uint32(v)
}

func (d *decoder) bytes(max int) []byte {
	n := d.int(max)
	if n > len(d.b) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string(max int) string { return string(d.bytes(max)) }

// maxLinkLen bounds a hyperlink's id and URI in packed form.
const maxLinkLen = 1 << 20

func (s *Screen) decodeStyle(d *decoder) style {
	var st style
	m := d.byte()
	if m&^(stFg|stBg|stUlColor|stUlStyle|stLink) != 0 {
		d.fail()
		return st
	}
	if m&stFg != 0 {
		st.fg = d.u32()
	}
	if m&stBg != 0 {
		st.bg = d.u32()
	}
	if m&stUlColor != 0 {
		st.ulColor = d.u32() & colorMask
	}
	if m&stUlStyle != 0 {
		st.ulStyle = d.byte()
		if st.ulStyle > 5 {
			d.fail()
		}
	}
	if m&stLink != 0 {
		id := d.string(maxLinkLen)
		uri := d.string(maxLinkLen)
		if d.err == nil {
			st.link = s.linkFor(hyperlink{id: id, uri: uri})
		}
	}
	return st
}

// decodeLine unpacks a line into l, with cols cells (cells past the packed
// ones are blank; packed cells past cols are dropped). It interns the
// styles and strings it meets.
func (s *Screen) decodeLine(enc []byte, cols int, l *line) error {
	d := decoder{b: enc}
	h := d.byte()
	l.wrapped = h&1 != 0
	l.marks = h >> 1 & 0xF
	if h>>5 != 0 {
		d.fail()
	}
	if cap(l.cells) >= cols {
		l.cells = l.cells[:cols]
	} else {
		l.cells = make([]cell, cols)
	}
	row := l.cells
	x := 0
	put := func(c cell) {
		if x < len(row) {
			row[x] = c
		}
		x++
	}
	for len(d.b) > 0 && d.err == nil {
		n := d.int(1 << 20)
		if n == 0 {
			d.fail()
			break
		}
		sid := s.styles.id(s.decodeStyle(&d))
		for left := n; left > 0 && d.err == nil; {
			t := d.byte()
			switch {
			case t >= 0x20 && t < 0x7f:
				put(cell{c: uint32(t) | w1, s: sid})
				left--
			case t == pkNull:
				put(cell{c: w1, s: sid})
				left--
			case t == pkWide || t == pkNarrow:
				cp := d.int(0x10FFFF)
				if cp == 0 {
					d.fail()
				}
				if t == pkNarrow {
					put(mkcell(rune(cp), 1, sid))
					left--
					break
				}
				if left < 2 {
					d.fail()
				}
				put(mkcell(rune(cp), 2, sid))
				put(cell{s: sid})
				left -= 2
			case t == pkAny:
				w := int(d.byte())
				cp := d.int(0x10FFFF)
				if w > 2 {
					d.fail()
				}
				put(mkcell(rune(cp), w, sid))
				left--
			case t == pkComb || t == pkCombWide:
				w := 2
				if t == pkComb {
					w = int(d.byte())
					if w > 2 {
						d.fail()
					}
				} else if left < 2 {
					d.fail()
				}
				str := d.bytes(1 << 20)
				if len(str) == 0 {
					d.fail()
				}
				if d.err != nil {
					break
				}
				put(cell{c: combFlag | s.combine(string(str)) | uint32(w)<<wShift, s: sid})
				left--
				if t == pkCombWide {
					put(cell{s: sid})
					left--
				}
			case t == pkCont:
				put(cell{s: sid})
				left--
			default:
				d.fail()
			}
			if left < 0 {
				d.fail()
			}
		}
	}
	for ; x < len(row); x++ {
		row[x] = blankCell
	}
	return d.err
}

// truncate keeps the n oldest lines and drops the newer ones.
func (sb *scrollback) truncate(n int) {
	if n >= sb.len() {
		return
	}
	if n <= 0 {
		sb.clear()
		return
	}
	for _, r := range sb.refs[sb.head+n:] {
		sb.bytes -= int(r.n) + sbRefSize
	}
	sb.refs = sb.refs[:sb.head+n]
	last := sb.refs[len(sb.refs)-1]
	ci := int(last.chunk - sb.chunkBase)
	if ci < sb.packed {
		// The newest chunk left is compressed: open it again, raw.
		c := sb.chunk(last.chunk)
		open := make([]byte, len(c), max(len(c), minChunkSize))
		copy(open, c)
		sb.chunks[ci] = open
	}
	sb.release()
	for i := ci + 1; i < len(sb.chunks); i++ {
		sb.chunks[i] = nil
	}
	sb.chunks = sb.chunks[:ci+1]
	sb.chunks[ci] = sb.chunks[ci][:last.off+last.n]
	sb.packed = min(sb.packed, ci)
}

// CompactScrollback compresses all of the history that waits raw for it
// (see scrollback): a quiet session's model calls it.
func (s *Screen) CompactScrollback() { s.sb.compact() }

// ScrollbackLines is how many lines the normal buffer's scrollback holds.
func (s *Screen) ScrollbackLines() int { return s.sb.len() }

// ScrollbackDropped is how many lines the history dropped from its top to
// keep within its limits (Options, TrimScrollback, a resize's reflow)
// since the screen was made or unmarshalled: what a reader of the whole
// history is missing. Lines the program erased (ED 3, a reset) are not
// counted.
func (s *Screen) ScrollbackDropped() int { return s.sb.dropped }

// TrimScrollback keeps the newest n lines of history (n >= 0) and, when it
// dropped any, makes n the screen's limit from then on. A trimmed copy then
// goes on as the original would once its history is full, which is the
// state a long session's screen is in: the saved cursor of the normal
// buffer, kept as an absolute line (as xterm.js keeps it), moves up with
// the lines dropped so it stays on the same row of the screen. The screen,
// cursor and modes are unchanged.
func (s *Screen) TrimScrollback(n int) {
	n = max(n, 0)
	drop := s.sb.len() - n
	if drop <= 0 {
		return
	}
	for range drop {
		s.sb.dropOldest()
	}
	s.normal.savedY = max(s.normal.savedY-drop, 0)
	s.sb.maxLines = n
}
