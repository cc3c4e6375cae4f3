package screen

// The escape sequence parser is the DEC ANSI state machine
// (https://vt100.net/emu/dec_ansi_parser) with the changes xterm.js makes to
// it: it runs on decoded code points, not bytes (so a C1 control is U+0080
// to U+009F, and a byte of a UTF-8 character never ends a string); any other
// non-ASCII character prints in the ground state, is kept in an OSC or DCS
// string and aborts every other sequence; a parameter byte after a private
// marker, or after an intermediate, makes the rest of a CSI sequence
// ignored; parameters are clamped and limited as xterm.js limits them. The
// model must read every stream exactly as the xterm.js in the browsers
// does, down to malformed input, which is why it has a parser of its own
// rather than a byte-level one.

// Parser states, as xterm.js numbers them.
const (
	stGround = iota
	stEscape
	stEscInter
	stCSIEntry
	stCSIParam
	stCSIInter
	stCSIIgnore
	stSOSPMAPC
	stOSC
	stDCSEntry
	stDCSParam
	stDCSIgnore
	stDCSInter
	stDCSPass
	numStates
)

// Parser actions.
const (
	acIgnore = iota
	acError
	acPrint
	acExecute
	acOSCStart
	acOSCPut
	acOSCEnd
	acCSIDispatch
	acParam
	acCollect
	acESCDispatch
	acClear
	acDCSHook
	acDCSPut
	acDCSUnhook
)

// nonASCII is the column of the transition table for code points from
// U+00A0 up.
const nonASCII = 0xA0

// transitions[state][code] is action<<4 | next state.
var transitions [numStates][nonASCII + 1]uint8

func init() {
	t := &transitions
	set := func(state, code, action, next int) { t[state][code] = uint8(action<<4 | next) }
	span := func(state, from, to, action, next int) { // to inclusive
		for c := from; c <= to; c++ {
			set(state, c, action, next)
		}
	}
	executables := func(state, action, next int) {
		span(state, 0x00, 0x17, action, next)
		set(state, 0x19, action, next)
		span(state, 0x1c, 0x1f, action, next)
	}
	for st := 0; st < numStates; st++ {
		span(st, 0, nonASCII, acError, stGround)
	}
	span(stGround, 0x20, 0x7e, acPrint, stGround)
	// Transitions from any state.
	for st := 0; st < numStates; st++ {
		for _, c := range []int{0x18, 0x1a, 0x99, 0x9a} {
			set(st, c, acExecute, stGround)
		}
		span(st, 0x80, 0x97, acExecute, stGround)
		set(st, 0x9c, acIgnore, stGround)
		set(st, 0x1b, acClear, stEscape)
		set(st, 0x9d, acOSCStart, stOSC)
		for _, c := range []int{0x98, 0x9e, 0x9f} {
			set(st, c, acIgnore, stSOSPMAPC)
		}
		set(st, 0x9b, acClear, stCSIEntry)
		set(st, 0x90, acClear, stDCSEntry)
	}
	executables(stGround, acExecute, stGround)
	executables(stEscape, acExecute, stEscape)
	set(stEscape, 0x7f, acIgnore, stEscape)
	executables(stOSC, acIgnore, stOSC)
	executables(stCSIEntry, acExecute, stCSIEntry)
	set(stCSIEntry, 0x7f, acIgnore, stCSIEntry)
	executables(stCSIParam, acExecute, stCSIParam)
	set(stCSIParam, 0x7f, acIgnore, stCSIParam)
	executables(stCSIIgnore, acExecute, stCSIIgnore)
	executables(stCSIInter, acExecute, stCSIInter)
	set(stCSIInter, 0x7f, acIgnore, stCSIInter)
	executables(stEscInter, acExecute, stEscInter)
	set(stEscInter, 0x7f, acIgnore, stEscInter)
	// OSC
	set(stEscape, 0x5d, acOSCStart, stOSC)
	span(stOSC, 0x20, 0x7f, acOSCPut, stOSC)
	for _, c := range []int{0x9c, 0x1b, 0x18, 0x1a, 0x07} {
		set(stOSC, c, acOSCEnd, stGround)
	}
	span(stOSC, 0x1c, 0x1f, acIgnore, stOSC)
	// SOS, PM, APC: ignored to their end.
	for _, c := range []int{0x58, 0x5e, 0x5f} {
		set(stEscape, c, acIgnore, stSOSPMAPC)
	}
	span(stSOSPMAPC, 0x20, 0x7f, acIgnore, stSOSPMAPC)
	executables(stSOSPMAPC, acIgnore, stSOSPMAPC)
	set(stSOSPMAPC, 0x9c, acIgnore, stGround)
	// CSI
	set(stEscape, 0x5b, acClear, stCSIEntry)
	span(stCSIEntry, 0x40, 0x7e, acCSIDispatch, stGround)
	span(stCSIEntry, 0x30, 0x3b, acParam, stCSIParam)
	span(stCSIEntry, 0x3c, 0x3f, acCollect, stCSIParam)
	span(stCSIParam, 0x30, 0x3b, acParam, stCSIParam)
	span(stCSIParam, 0x40, 0x7e, acCSIDispatch, stGround)
	span(stCSIParam, 0x3c, 0x3f, acIgnore, stCSIIgnore)
	span(stCSIIgnore, 0x20, 0x3f, acIgnore, stCSIIgnore)
	set(stCSIIgnore, 0x7f, acIgnore, stCSIIgnore)
	span(stCSIIgnore, 0x40, 0x7e, acIgnore, stGround)
	span(stCSIEntry, 0x20, 0x2f, acCollect, stCSIInter)
	span(stCSIInter, 0x20, 0x2f, acCollect, stCSIInter)
	span(stCSIInter, 0x30, 0x3f, acIgnore, stCSIIgnore)
	span(stCSIInter, 0x40, 0x7e, acCSIDispatch, stGround)
	span(stCSIParam, 0x20, 0x2f, acCollect, stCSIInter)
	// ESC
	span(stEscape, 0x20, 0x2f, acCollect, stEscInter)
	span(stEscInter, 0x20, 0x2f, acCollect, stEscInter)
	span(stEscInter, 0x30, 0x7e, acESCDispatch, stGround)
	span(stEscape, 0x30, 0x4f, acESCDispatch, stGround)
	span(stEscape, 0x51, 0x57, acESCDispatch, stGround)
	for _, c := range []int{0x59, 0x5a, 0x5c} {
		set(stEscape, c, acESCDispatch, stGround)
	}
	span(stEscape, 0x60, 0x7e, acESCDispatch, stGround)
	// DCS
	set(stEscape, 0x50, acClear, stDCSEntry)
	executables(stDCSEntry, acIgnore, stDCSEntry)
	set(stDCSEntry, 0x7f, acIgnore, stDCSEntry)
	span(stDCSEntry, 0x1c, 0x1f, acIgnore, stDCSEntry)
	span(stDCSEntry, 0x20, 0x2f, acCollect, stDCSInter)
	span(stDCSEntry, 0x30, 0x3b, acParam, stDCSParam)
	span(stDCSEntry, 0x3c, 0x3f, acCollect, stDCSParam)
	executables(stDCSIgnore, acIgnore, stDCSIgnore)
	span(stDCSIgnore, 0x20, 0x7f, acIgnore, stDCSIgnore)
	executables(stDCSParam, acIgnore, stDCSParam)
	set(stDCSParam, 0x7f, acIgnore, stDCSParam)
	span(stDCSParam, 0x30, 0x3b, acParam, stDCSParam)
	span(stDCSParam, 0x3c, 0x3f, acIgnore, stDCSIgnore)
	span(stDCSParam, 0x20, 0x2f, acCollect, stDCSInter)
	executables(stDCSInter, acIgnore, stDCSInter)
	set(stDCSInter, 0x7f, acIgnore, stDCSInter)
	span(stDCSInter, 0x20, 0x2f, acCollect, stDCSInter)
	span(stDCSInter, 0x30, 0x3f, acIgnore, stDCSIgnore)
	span(stDCSInter, 0x40, 0x7e, acDCSHook, stDCSPass)
	span(stDCSParam, 0x40, 0x7e, acDCSHook, stDCSPass)
	span(stDCSEntry, 0x40, 0x7e, acDCSHook, stDCSPass)
	executables(stDCSPass, acDCSPut, stDCSPass)
	span(stDCSPass, 0x20, 0x7e, acDCSPut, stDCSPass)
	set(stDCSPass, 0x7f, acIgnore, stDCSPass)
	for _, c := range []int{0x1b, 0x9c, 0x18, 0x1a} {
		set(stDCSPass, c, acDCSUnhook, stGround)
	}
	// Non-ASCII characters.
	set(stGround, nonASCII, acPrint, stGround)
	set(stOSC, nonASCII, acOSCPut, stOSC)
	set(stCSIIgnore, nonASCII, acIgnore, stCSIIgnore)
	set(stDCSIgnore, nonASCII, acIgnore, stDCSIgnore)
	set(stDCSPass, nonASCII, acDCSPut, stDCSPass)
}

// Parameter limits, as xterm.js's.
const (
	maxParams    = 32
	maxSubParams = 32
	maxParam     = 0x7FFFFFFF
)

// params are a CSI sequence's parameters: each may have sub-parameters
// (separated by ':'). An empty parameter is 0; an empty sub-parameter is
// -1.
type params struct {
	v       [maxParams]int32
	n       int
	sub     [maxSubParams]int32
	nsub    int
	subIdx  [maxParams]uint16 // start<<8 | end of each parameter's sub-parameters
	reject  bool              // past maxParams: further digits are ignored
	rejectS bool              // past maxSubParams
	inSub   bool              // digits go to the last sub-parameter
}

// reset leaves one parameter, 0, as xterm.js's parser does on entering a
// sequence.
func (p *params) reset() {
	p.n, p.nsub = 0, 0
	p.reject, p.rejectS, p.inSub = false, false, false
	p.add(0)
}

func (p *params) add(v int32) {
	p.inSub = false
	if p.n >= maxParams {
		p.reject = true
		return
	}
	p.subIdx[p.n] = uint16(p.nsub)<<8 | uint16(p.nsub)
	p.v[p.n] = v
	p.n++
}

func (p *params) addSub(v int32) {
	p.inSub = true
	if p.n == 0 {
		return
	}
	if p.reject || p.nsub >= maxSubParams {
		p.rejectS = true
		return
	}
	p.sub[p.nsub] = v
	p.nsub++
	p.subIdx[p.n-1]++
}

func (p *params) digit(d int32) {
	if p.reject || (p.inSub && p.rejectS) {
		return
	}
	store, n := p.v[:], p.n
	if p.inSub {
		store, n = p.sub[:], p.nsub
	}
	if n == 0 {
		return
	}
	cur := store[n-1]
	if cur == -1 {
		store[n-1] = d
		return
	}
	if cur > (maxParam-d)/10 {
		store[n-1] = maxParam
		return
	}
	store[n-1] = cur*10 + d
}

// get is parameter i, or 0 past the end.
func (p *params) get(i int) int {
	if i < p.n {
		return int(p.v[i])
	}
	return 0
}

// or1 is parameter i, with 0 (or absent) meaning 1.
func (p *params) or1(i int) int {
	if v := p.get(i); v != 0 {
		return v
	}
	return 1
}

func (p *params) subs(i int) []int32 {
	if i >= p.n {
		return nil
	}
	s, e := p.subIdx[i]>>8, p.subIdx[i]&0xFF
	if e <= s {
		return nil
	}
	return p.sub[s:e]
}

// OSC parsing states (xterm.js OscParser).
const (
	oscStart = iota
	oscID
	oscPayload
	oscAbort
)

// maxOSC bounds the payload kept of an OSC string the model handles;
// longer ones are dropped whole. (xterm.js's bound is 10 million
// characters; titles, paths and links in practice are far shorter.)
const maxOSC = 1 << 20

// parser is the state of the escape sequence parser between Writes.
type parser struct {
	state   uint8
	collect uint32 // prefix and intermediate bytes, 8 bits each
	p       params

	osc     uint8 // oscStart...
	oscID   int   // -1 before a digit
	oscKeep bool  // the payload is kept (an OSC the model handles)
	oscLong bool  // the payload passed maxOSC
	oscData []byte
	utf8    [4]byte // bytes of a UTF-8 character cut by the end of a Write
	utf8n   uint8
}

func (p *parser) reset() {
	p.state = stGround
	p.collect = 0
	p.p.reset()
	p.osc = oscStart
	p.oscID = -1
	p.oscData = p.oscData[:0]
	p.oscKeep, p.oscLong = false, false
}

// handledOSC reports the OSC numbers whose payload the model uses.
func handledOSC(id int) bool {
	switch id {
	case 0, 1, 2, 7, 8, 133:
		return true
	}
	return false
}

func (p *parser) oscStartString() {
	p.osc = oscID
	p.oscID = -1
	p.oscData = p.oscData[:0]
	p.oscKeep, p.oscLong = false, false
}

func (p *parser) oscPut(cp rune) {
	switch p.osc {
	case oscID:
		if cp == ';' {
			p.osc = oscPayload
			p.oscKeep = handledOSC(p.oscID)
			return
		}
		if cp < '0' || cp > '9' {
			p.osc = oscAbort
			return
		}
		if p.oscID == -1 {
			p.oscID = 0
		}
		if p.oscID < 1e9 {
			p.oscID = p.oscID*10 + int(cp-'0')
		}
	case oscPayload:
		if !p.oscKeep || p.oscLong {
			return
		}
		if len(p.oscData) >= maxOSC {
			p.oscLong = true
			p.oscData = nil
			return
		}
		if cp < 0x80 {
			p.oscData = append(p.oscData, byte(cp))
		} else {
			p.oscData = appendRune(p.oscData, cp)
		}
	}
}
