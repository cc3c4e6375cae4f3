package screen

// A style is a cell's colors and attributes. fg and bg use xterm.js's bit
// layout, because xterm.js treats them as raw words in places that show:
// saving the cursor keeps fg and bg but not the extended part (underline
// style and color, hyperlink), erasing keeps only the background color,
// SGR 0 clears the protected flag, and the extended part counts only while
// bg has bgHasExt.
type style struct {
	fg, bg  uint32
	ulColor uint32 // underline color: value and mode as in fg
	ulStyle uint8  // 0 none, 1 single, 2 double, 3 curly, 4 dotted, 5 dashed
	link    uint32 // hyperlink: index into Screen.links plus one; 0 none
}

const (
	colorMask = 0x3FFFFFF // color value and mode
	cmMask    = 0x3000000
	cmP16     = 0x1000000
	cmP256    = 0x2000000
	cmRGB     = 0x3000000
	rgbMask   = 0xFFFFFF

	fgInverse   = 1 << 26
	fgBold      = 1 << 27
	fgUnderline = 1 << 28
	fgBlink     = 1 << 29
	fgInvisible = 1 << 30
	fgStrike    = 1 << 31

	bgItalic    = 1 << 26
	bgDim       = 1 << 27
	bgHasExt    = 1 << 28
	bgProtected = 1 << 29
	bgOverline  = 1 << 30
)

// canonical drops what xterm.js ignores, so equal-looking styles intern to
// one id: the extended part when bgHasExt is clear.
func (st style) canonical() style {
	if st.bg&bgHasExt == 0 {
		st.ulColor, st.ulStyle, st.link = 0, 0, 0
	}
	st.fg = canonicalColor(st.fg)
	st.bg = canonicalColor(st.bg)
	st.ulColor = canonicalColor(st.ulColor)
	return st
}

// canonicalColor clears the bits a color's mode does not use (a palette
// color set over an RGB one keeps the RGB bits in xterm.js, unread).
func canonicalColor(c uint32) uint32 {
	switch c & cmMask {
	case 0:
		return c &^ rgbMask
	case cmP16, cmP256:
		return c &^ (rgbMask &^ 0xFF)
	}
	return c
}

// underlined is xterm.js's isUnderline: the flag, or an extended underline
// style, and a hyperlink counts as a (dashed) underline style.
func (st style) underlined() bool {
	if st.bg&bgHasExt != 0 && (st.ulStyle != 0 || st.link != 0) {
		return true
	}
	return st.fg&fgUnderline != 0
}

// updateExt is xterm.js's updateExtended: the extended part counts while it
// has an underline style or a hyperlink.
func (st *style) updateExt() {
	if st.ulStyle != 0 || st.link != 0 {
		st.bg |= bgHasExt
	} else {
		st.bg &^= bgHasExt
	}
}

// hyperlink is an OSC 8 link: its id parameter ("" when none was given) and
// its URI.
type hyperlink struct {
	id, uri string
}

// styleTable interns styles. Id 0 is the default style. Styles are
// collected (see Screen.collect) when the table outgrows what the grids
// use, so a stream of ever-new colors cannot grow it without bound.
type styleTable struct {
	list  []style
	index map[style]uint32
}

func (t *styleTable) id(st style) uint32 {
	st = st.canonical()
	if st == (style{}) {
		return 0
	}
	if i, ok := t.index[st]; ok {
		return i
	}
	if t.index == nil {
		t.index = make(map[style]uint32)
	}
	if len(t.list) == 0 {
		t.list = append(t.list, style{})
	}
	i := uint32(len(t.list))
	t.list = append(t.list, st)
	t.index[st] = i
	return i
}

func (t *styleTable) get(id uint32) style {
	if int(id) < len(t.list) {
		return t.list[id]
	}
	return style{}
}

// curID is the style id of the current attributes.
func (s *Screen) curID() uint32 {
	if !s.attrOK {
		s.attrID = s.styles.id(s.attr)
		s.attrOK = true
	}
	return s.attrID
}

// eraseID is the style of erased cells: the current background color and
// nothing else (xterm.js _eraseAttrData).
func (s *Screen) eraseID() uint32 {
	bg := s.attr.bg & colorMask
	if !s.eraseOK || s.eraseBg != bg {
		s.eraseBg = bg
		s.eraseSID = s.styles.id(style{bg: bg})
		s.eraseOK = true
	}
	return s.eraseSID
}

func (s *Screen) setAttr(st style) {
	s.attr = st
	s.attrOK = false
}

// combine returns the id of a multi-code-point cell string.
func (s *Screen) combine(str string) uint32 {
	if i, ok := s.combIndex[str]; ok {
		return i
	}
	if s.combIndex == nil {
		s.combIndex = make(map[string]uint32)
	}
	i := uint32(len(s.combined))
	s.combined = append(s.combined, str)
	s.combIndex[str] = i
	return i
}

// cellString is the text of a cell's content ("" for none).
func (s *Screen) cellString(c cell) string {
	if c.c&combFlag != 0 {
		if i := int(c.c & cpMask); i < len(s.combined) {
			return s.combined[i]
		}
		return ""
	}
	if cp := c.c & cpMask; cp != 0 {
		return string(rune(cp))
	}
	return ""
}

// appendCellString appends the text of a cell's content.
func (s *Screen) appendCellString(b []byte, c cell) []byte {
	if c.c&combFlag != 0 {
		if i := int(c.c & cpMask); i < len(s.combined) {
			return append(b, s.combined[i]...)
		}
		return b
	}
	if cp := c.c & cpMask; cp != 0 {
		if cp < 0x80 {
			return append(b, byte(cp))
		}
		return appendRune(b, rune(cp))
	}
	return b
}

// addToCell appends a code point to a cell's characters (xterm.js
// addCodepointToCell); a width other than 0 replaces the cell's width.
func (s *Screen) addToCell(row []cell, i int, cp rune, width int) {
	if i < 0 || i >= len(row) {
		return
	}
	c := row[i].c
	switch {
	case c&combFlag != 0:
		c = c&^cpMask | s.combine(s.cellString(row[i])+string(cp))
	case c&cpMask != 0:
		c = c&^cpMask | combFlag | s.combine(string(rune(c&cpMask))+string(cp))
	default:
		c = uint32(cp) | w1
	}
	if width != 0 {
		c = c&(contentMask) | uint32(width)<<wShift
	}
	row[i].c = c
}

// Limits past which the tables are collected: at least these, and twice
// what survived the last collection.
const (
	minStyleLimit = 1024
	minCombLimit  = 1024
	minLinkLimit  = 256
)

// maybeCollect collects the tables when one has outgrown its limit.
func (s *Screen) maybeCollect() {
	if len(s.styles.list) > s.styleLimit || len(s.combined) > s.combLimit || len(s.links) > s.linkLimit {
		s.collect()
	}
}

// collect drops the styles, strings and hyperlinks that no cell of the
// grids and no current attribute uses, and renumbers the rest. (Scrollback
// lines hold their styles, strings and links inline, so only the two grids
// refer to the tables.)
func (s *Screen) collect() {
	if len(s.styles.list) == 0 {
		s.styles.list = []style{{}}
	}
	styleMap := make([]uint32, len(s.styles.list))
	for i := range styleMap {
		styleMap[i] = ^uint32(0)
	}
	combMap := make([]uint32, len(s.combined))
	for i := range combMap {
		combMap[i] = ^uint32(0)
	}
	var nstyles []style
	nstyles = append(nstyles, style{})
	styleMap[0] = 0
	var ncomb []string
	mark := func(b *buffer) {
		for li := range len(b.lines) + len(b.hidden) {
			var row []cell
			if li < len(b.hidden) {
				row = b.hidden[li].cells
			} else {
				row = b.lines[li-len(b.hidden)].cells
			}
			for ci := range row {
				c := &row[ci]
				if m := styleMap[c.s]; m != ^uint32(0) {
					c.s = m
				} else {
					styleMap[c.s] = uint32(len(nstyles))
					nstyles = append(nstyles, s.styles.list[c.s])
					c.s = styleMap[c.s]
				}
				if c.c&combFlag != 0 {
					old := c.c & cpMask
					if combMap[old] == ^uint32(0) {
						combMap[old] = uint32(len(ncomb))
						ncomb = append(ncomb, s.combined[old])
					}
					c.c = c.c&^cpMask | combMap[old]
				}
			}
		}
	}
	mark(s.normal)
	mark(s.alt)

	// Hyperlinks: those of surviving styles and of the current attributes.
	linkMap := make([]uint32, len(s.links))
	var nlinks []hyperlink
	remapLink := func(l uint32) uint32 {
		if l == 0 || int(l) > len(s.links) {
			return 0
		}
		if linkMap[l-1] == 0 {
			nlinks = append(nlinks, s.links[l-1])
			linkMap[l-1] = uint32(len(nlinks))
		}
		return linkMap[l-1]
	}
	s.styles.index = make(map[style]uint32, len(nstyles))
	for i := range nstyles {
		nstyles[i].link = remapLink(nstyles[i].link)
		if i > 0 {
			s.styles.index[nstyles[i]] = uint32(i)
		}
	}
	s.styles.list = nstyles
	s.attr.link = remapLink(s.attr.link)
	s.linkIndex = make(map[hyperlink]uint32)
	for i, l := range nlinks {
		if l.id != "" {
			s.linkIndex[l] = uint32(i + 1)
		}
	}
	s.links = nlinks
	s.combined = ncomb
	s.combIndex = make(map[string]uint32, len(ncomb))
	for i, str := range ncomb {
		s.combIndex[str] = uint32(i)
	}
	s.attrOK, s.eraseOK = false, false
	s.styleLimit = max(minStyleLimit, 2*len(nstyles))
	s.combLimit = max(minCombLimit, 2*len(ncomb))
	s.linkLimit = max(minLinkLimit, 2*len(nlinks))
}

// linkFor interns an OSC 8 hyperlink. Links with an id parameter are shared
// by id and URI, as xterm.js shares them; each link without one is new.
func (s *Screen) linkFor(l hyperlink) uint32 {
	if l.id != "" {
		if i, ok := s.linkIndex[l]; ok {
			return i
		}
	}
	s.links = append(s.links, l)
	i := uint32(len(s.links))
	if l.id != "" {
		if s.linkIndex == nil {
			s.linkIndex = make(map[hyperlink]uint32)
		}
		s.linkIndex[l] = i
	}
	return i
}

func (s *Screen) linkOf(st style) hyperlink {
	if st.link == 0 || int(st.link) > len(s.links) {
		return hyperlink{}
	}
	return s.links[st.link-1]
}
