package export

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"termkeep/internal/vtscan"
)

// Replacement is what a redacted secret becomes.
const Replacement = "[REDACTED]"

// builtinPatterns are the secrets every Redactor looks for. Where a pattern
// has a group named "secret", only that group is replaced (the name of a
// key=value pair stays readable); otherwise the whole match is.
var builtinPatterns = []struct{ expr, need string }{
	{`AKIA[0-9A-Z]{16}`, ""},
	{`ASIA[0-9A-Z]{16}`, ""},
	{`(?i)aws_secret_access_key["']?[ \t]*[=:][ \t]*["']?(?P<secret>[A-Za-z0-9/+=]{40})`, "=:"},
	{`gh[pousr]_[A-Za-z0-9]{36,}`, ""},
	{`github_pat_[A-Za-z0-9_]{22,}`, ""},
	{`glpat-[A-Za-z0-9_-]{20,}`, ""},
	{`xox[baprs]-[A-Za-z0-9-]{10,}`, ""},
	// A JWT: a base64url JSON header and payload (both start {" , which is
	// eyJ), then the signature, empty when unsigned.
	{`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`, "."},
	// OpenAI: project, service account and admin keys, and the older
	// sk- and 48 letters and digits; Anthropic's sk-ant-. The word boundary
	// and the lengths keep "scikit-learn", "risk-free" and "task-12" out.
	{`\bsk-(?:proj|svcacct|admin|ant)-[A-Za-z0-9_-]{20,}`, "-"},
	{`\bsk-[A-Za-z0-9]{32,}`, "-"},
	// Stripe secret and restricted keys, live and test.
	{`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`, "_"},
	// npm access tokens: npm_ and 36 letters and digits.
	{`\bnpm_[A-Za-z0-9]{36,}`, "_"},
	// A password in a URL (scheme://user:password@host): the scheme, user
	// and host stay readable. A user alone is replaced only when it looks
	// like a token (https://TOKEN@github.com), not git@ or bob@.
	{`(?i)\b[a-z][a-z0-9+.-]*://[^\s:@/?#]+:(?P<secret>[^\s@/?#]+)@`, "@"},
	{`(?i)\b[a-z][a-z0-9+.-]*://(?P<secret>[A-Za-z0-9_-]{20,})@`, "@"},
	{`(?i)(?:password|passwd|secret|token|api[_-]?key|secret[_-]?key)["']?[ \t]*[=:][ \t]*(?P<secret>"[^"\r\n]*"|'[^'\r\n]*'|[^\s"']+)`, "=:"},
}

// PEM private key blocks span lines: they are found by their markers.
var (
	pemBegin = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	pemEnd   = regexp.MustCompile(`-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
)

// maxPEMLines bounds a PEM block whose END marker never comes: past it,
// redaction stops hiding everything (what it hid stays hidden).
const maxPEMLines = 512

// Redactor hides secrets in terminal output: AWS access key ids and secret
// keys, GitHub, GitLab and Slack tokens, JWTs, OpenAI, Anthropic, Stripe
// and npm keys, passwords in URLs, the values of password=, passwd:,
// secret=, token= and api_key= pairs, PEM private key blocks, and whatever
// extra patterns it was made with. A Redactor is immutable and safe for
// concurrent use.
//
// It works line by line (a line ends at '\n' or '\r'; one longer than 64
// KiB is cut where its text has a space or an escape sequence) over each
// line's text: the bytes that are not part of an escape sequence. A secret
// is found even when escape sequences (colors, say) sit inside it, and
// replacing it removes only its text: the escape sequences stay in place,
// so the output's colors and modes are never corrupted, and the secret's
// first character is where Replacement goes. Lines are put together across
// however the output was chunked, so a secret split between two reads of
// the pty is found whole.
type Redactor struct {
	patterns []pattern
}

type pattern struct {
	re    *regexp.Regexp
	group int    // the "secret" group, or 0: the whole match
	need  string // a line without any of these bytes cannot match ("": no hint)
}

// NewRedactor returns a Redactor for the built-in patterns plus extra ones
// (Go regexp syntax; a group named "secret" narrows what is replaced).
func NewRedactor(extra ...string) (*Redactor, error) {
	r := &Redactor{}
	for _, p := range builtinPatterns {
		r.add(regexp.MustCompile(p.expr), p.need)
	}
	for _, expr := range extra {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("redaction pattern %q: %w", expr, err)
		}
		r.add(re, "")
	}
	return r, nil
}

func (r *Redactor) add(re *regexp.Regexp, need string) {
	r.patterns = append(r.patterns, pattern{re: re, group: max(re.SubexpIndex("secret"), 0), need: need})
}

// Redact returns p (whole lines of output, or rendered text) with its
// secrets replaced.
func (r *Redactor) Redact(p []byte) []byte {
	var out []byte
	s := r.stream(func(_ uint64, line []byte, edits []edit) error {
		out = applyEdits(out, line, edits)
		return nil
	})
	s.write(0, p)
	s.flush()
	return out
}

// edit replaces the stream's bytes [off, off+del) with ins.
type edit struct {
	off, del uint64
	ins      string
}

// applyEdits appends line, whose first byte is at offset edits are
// relative to line (see redactStream), with edits applied, to dst.
func applyEdits(dst, line []byte, edits []edit) []byte {
	pos := 0
	for _, e := range edits {
		dst = append(dst, line[pos:e.off]...)
		dst = append(dst, e.ins...)
		pos = int(e.off + e.del)
	}
	return append(dst, line[pos:]...)
}

// span is a range of a line's text to hide; ins puts Replacement in its
// place (a PEM block's continuation lines just vanish).
type span struct {
	start, end int
	ins        bool
}

const (
	maxLine    = 64 << 10 // a longer line is cut
	breakRange = 4 << 10  // looking this far back for a place to cut it
)

// redactStream puts a stream's lines together and hands each to emit with
// its edits (offsets relative to the line's first byte), in order.
type redactStream struct {
	r     *Redactor
	emit  func(off uint64, line []byte, edits []edit) error
	buf   []byte
	head  int            // buf[:head] is done
	scan  int            // buf[head:scan] holds no line end
	start uint64         // stream offset of buf[head]
	seq   vtscan.Scanner // state at buf[head]
	pem   int            // lines left in a PEM block; 0 outside one

	text  []byte // scratch: a line's text
	idx   []int  // and where each of its bytes is in the line
	moves []move // and the cursor moves among them (drawn.go)
	cells []cell
	spans []span
	edits []edit
}

func (r *Redactor) stream(emit func(off uint64, line []byte, edits []edit) error) *redactStream {
	return &redactStream{r: r, emit: emit}
}

// write adds the stream's bytes at off. Bytes that do not follow the ones
// before (a gap in between) end the line those were in.
func (s *redactStream) write(off uint64, p []byte) error {
	if off != s.start+uint64(len(s.buf)-s.head) {
		if err := s.flush(); err != nil {
			return err
		}
		// An escape sequence cut by a gap does not go on after it.
		s.seq, s.start = vtscan.Scanner{}, off
	}
	if s.head == len(s.buf) {
		s.buf, s.head, s.scan = s.buf[:0], 0, 0
	} else if s.head > 0 {
		n := copy(s.buf, s.buf[s.head:])
		s.buf, s.scan, s.head = s.buf[:n], s.scan-s.head, 0
	}
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexAny(s.buf[s.scan:], "\n\r")
		if i < 0 {
			s.scan = len(s.buf)
			break
		}
		if err := s.line(s.scan + i + 1); err != nil {
			return err
		}
	}
	for len(s.buf)-s.head > maxLine {
		if err := s.line(s.breakPoint()); err != nil {
			return err
		}
	}
	return nil
}

// flush ends the line being put together.
func (s *redactStream) flush() error {
	if s.head == len(s.buf) {
		return nil
	}
	return s.line(len(s.buf))
}

// breakPoint is where to cut a line too long to hold: after the last space
// or escape sequence byte within breakRange before maxLine, else at maxLine.
func (s *redactStream) breakPoint() int {
	end := s.head + maxLine
	seq := s.seq.Kinds() // kinds only: params untouched
	cut := end
	for i := s.head; i < end; i++ {
		k := seq.Step(s.buf[i])
		if i >= end-breakRange && (k != vtscan.Text || s.buf[i] == ' ') {
			cut = i + 1
		}
	}
	return cut
}

// line redacts buf[head:end] as one line and emits it.
func (s *redactStream) line(end int) error {
	raw := s.buf[s.head:end]
	s.text, s.idx, s.moves = s.text[:0], s.idx[:0], s.moves[:0]
	edited := false // the line moves its cursor back: what it shows differs from its text
	for i, b := range raw {
		// A control a terminal executes inside a sequence (a CAN that ends
		// it, say) is no text: neither matched, removed, nor replaced there.
		ground := s.seq.Ground()
		switch k := s.seq.Step(b); {
		case k == vtscan.Text && ground:
			s.text = append(s.text, b)
			s.idx = append(s.idx, i)
			edited = edited || b == '\b'
		case k == vtscan.CSI:
			if m, ok := cursorMove(i, &s.seq); ok {
				s.moves = append(s.moves, m)
				edited = true
			}
		}
	}
	s.spans = s.r.find(s.text, &s.pem, s.spans[:0])
	if edited {
		// A secret drawn with corrections (drawn.go) is found as shown.
		s.spans = mergeSpans(s.drawnSpans(s.spans))
	}
	s.edits = s.edits[:0]
	for _, sp := range s.spans {
		ins := sp.ins
		for i := sp.start; i < sp.end; {
			j := i + 1
			for j < sp.end && s.idx[j] == s.idx[j-1]+1 {
				j++
			}
			e := edit{off: uint64(s.idx[i]), del: uint64(s.idx[j-1] + 1 - s.idx[i])}
			if ins {
				e.ins, ins = Replacement, false
			}
			s.edits = append(s.edits, e)
			i = j
		}
	}
	off := s.start
	s.start += uint64(len(raw))
	s.head, s.scan = end, end
	return s.emit(off, raw, s.edits)
}

// find returns the merged spans of text to hide, in order.
func (r *Redactor) find(text []byte, pem *int, spans []span) []span {
	spans = pemSpans(text, pem, spans)
	return mergeSpans(r.match(text, spans))
}

// match appends the spans of text that r's patterns match.
func (r *Redactor) match(text []byte, spans []span) []span {
	for _, p := range r.patterns {
		if p.need != "" && bytes.IndexAny(text, p.need) < 0 {
			continue
		}
		for _, m := range p.re.FindAllSubmatchIndex(text, -1) {
			s, e := m[0], m[1]
			if p.group > 0 {
				s, e = m[2*p.group], m[2*p.group+1]
			}
			if s >= 0 && e > s {
				spans = append(spans, span{s, e, true})
			}
		}
	}
	return spans
}

// mergeSpans sorts spans and merges the ones that overlap or touch.
func mergeSpans(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.start <= last.end {
			last.end = max(last.end, sp.end)
			last.ins = last.ins || sp.ins
			continue
		}
		out = append(out, sp)
	}
	return out
}

// pemSpans hides PEM private key blocks, which span lines: from a BEGIN
// marker to its END marker, everything but escape sequences goes.
func pemSpans(text []byte, pem *int, spans []span) []span {
	pos := 0
	if *pem > 0 {
		loc := pemEnd.FindIndex(text)
		if loc == nil {
			*pem--
			return append(spans, span{0, len(text), false})
		}
		spans = append(spans, span{0, loc[1], false})
		*pem, pos = 0, loc[1]
	}
	for bytes.Contains(text[pos:], []byte("-----BEGIN ")) {
		loc := pemBegin.FindIndex(text[pos:])
		if loc == nil {
			break
		}
		begin, body := pos+loc[0], pos+loc[1]
		end := pemEnd.FindIndex(text[body:])
		if end == nil {
			*pem = maxPEMLines
			return append(spans, span{begin, len(text), true})
		}
		spans = append(spans, span{begin, body + end[1], true})
		pos = body + end[1]
	}
	return spans
}

// editCursor applies a stream's edits (absolute offsets, in order) to its
// chunks, in order; an edit may span chunks.
type editCursor struct {
	edits []edit
	i     int
}

// apply appends data, the stream's bytes at off, with the edits that fall
// on it, to dst.
func (c *editCursor) apply(dst []byte, off uint64, data []byte) []byte {
	end := off + uint64(len(data))
	for c.i < len(c.edits) && c.edits[c.i].off+c.edits[c.i].del <= off {
		c.i++ // before this chunk: bytes the log no longer gave
	}
	pos := off
	for c.i < len(c.edits) && c.edits[c.i].off < end {
		e := c.edits[c.i]
		s := max(e.off, pos)
		dst = append(dst, data[pos-off:s-off]...)
		if e.off >= off {
			dst = append(dst, e.ins...)
		}
		pos = min(e.off+e.del, end)
		if e.off+e.del > end {
			break // goes on in the next chunk
		}
		c.i++
	}
	return append(dst, data[pos-off:]...)
}
