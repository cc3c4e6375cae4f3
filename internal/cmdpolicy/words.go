package cmdpolicy

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// A word is one argument as the patterns see it.
type word struct {
	text []rune // its value, with unknown where it depends on the run
	val  string // its value, when known: text loses bytes that are not UTF-8
	show string // for messages: the value, the unknown parts as written
}

func lit(s string) word { return word{[]rune(s), s, s} }

func (w word) known() bool { return !slices.Contains(w.text, unknown) }

// String is the value of a known word.
func (w word) String() string { return w.val }

// join is the words as one, blanks between (what watch and sh -c see).
func join(ws []word) word {
	var j word
	var vals, show []string
	for i, w := range ws {
		if i > 0 {
			j.text = append(j.text, ' ')
		}
		j.text = append(j.text, w.text...)
		vals = append(vals, w.val)
		show = append(show, w.show)
	}
	j.val, j.show = strings.Join(vals, " "), strings.Join(show, " ")
	return j
}

type wordBuilder struct {
	text      []rune
	val, show strings.Builder
}

func (b *wordBuilder) known(s string) {
	b.text = append(b.text, []rune(s)...)
	b.val.WriteString(s)
	b.show.WriteString(s)
}

func (b *wordBuilder) unknown(written string) {
	if len(b.text) == 0 || b.text[len(b.text)-1] != unknown {
		b.text = append(b.text, unknown)
	}
	b.show.WriteString(written)
}

func (b *wordBuilder) word() word { return word{b.text, b.val.String(), b.show.String()} }

// maxBraces bounds what one word's brace expansion may become before it
// counts as unknown: {1..100000} is a value, not a command.
const maxBraces = 64

// words are the fields the shell makes of args: brace expansion done,
// quotes removed; what depends on the run is unknown.
func (c *checker) words(args []*syntax.Word) []word {
	var out []word
	for _, a := range args {
		if !syntax.SplitBraces(a) {
			out = append(out, c.word(a))
			continue
		}
		var ex []word
		for w, err := range expand.BracesSeq(nil, a) {
			if err != nil || len(ex) == maxBraces {
				ex = nil
				break
			}
			ex = append(ex, c.word(w))
		}
		if ex == nil {
			var b wordBuilder
			b.unknown(c.source(a))
			ex = []word{b.word()}
		}
		out = append(out, ex...)
	}
	return out
}

// word is w's value with quotes removed.
func (c *checker) word(w *syntax.Word) word {
	var b wordBuilder
	if w != nil {
		c.parts(&b, w.Parts, false)
	}
	return b.word()
}

func (c *checker) parts(b *wordBuilder, parts []syntax.WordPart, quoted bool) {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if quoted {
				quotedLit(b, p.Value)
			} else {
				bareLit(b, p.Value)
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				b.known(ansiC(p.Value))
			} else {
				b.known(p.Value)
			}
		case *syntax.DblQuoted:
			c.parts(b, p.Parts, true)
		default: // $x, ${x}, $(...), $((...)), <(...), extended globs
			b.unknown(c.source(p))
		}
	}
}

// source is n as written, for messages.
func (c *checker) source(n syntax.Node) string {
	from, to := int(n.Pos().Offset()), int(n.End().Offset())
	if from < 0 || from > to || to > len(c.src) {
		return "…"
	}
	return c.src[from:to]
}

// bareLit reads an unquoted literal: a backslash quotes the next
// character; a glob (* ? [...]) and a history expansion (!x) are known
// only when the line runs.
func bareLit(b *wordBuilder, s string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' && i+n < len(s):
			_, m := utf8.DecodeRuneInString(s[i+n:])
			b.known(s[i+n : i+n+m])
			i += n + m
			continue
		case r == '*' || r == '?':
			b.unknown(s[i : i+1])
		case r == '[' && strings.IndexByte(s[i+1:], ']') >= 0:
			end := i + 1 + strings.IndexByte(s[i+1:], ']') + 1
			b.unknown(s[i:end])
			i = end
			continue
		case history(s[i:]):
			b.unknown(s[i:])
			return
		default:
			b.known(s[i : i+n])
		}
		i += n
	}
}

// quotedLit reads a literal between double quotes, where a backslash
// quotes only $ ` " \ and a history expansion still happens.
func quotedLit(b *wordBuilder, s string) {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0:
			i++
			b.known(s[i : i+1])
		case history(s[i:]):
			b.unknown(s[i:])
			return
		default:
			b.known(s[i : i+1])
		}
	}
}

// history reports whether s starts with an interactive shell's history
// expansion (!!, !rm, !-2), which repeats an earlier line: ! before a
// blank, = or ( is itself.
func history(s string) bool {
	return len(s) > 1 && s[0] == '!' && strings.IndexByte(" \t\n=(", s[1]) < 0
}

// ansiC decodes the backslash escapes of a $'...' string as bash does.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		if c := strings.IndexByte(`abefnrtv\'"?E`, s[i]); c >= 0 {
			b.WriteByte("\a\b\x1b\f\n\r\t\v\\'\"?\x1b"[c])
			continue
		}
		// numeric escapes: base, the digits they may take, how many
		base, width, skip := 0, 0, 0
		switch s[i] {
		case '0', '1', '2', '3', '4', '5', '6', '7':
			base, width = 8, 3
		case 'x':
			base, width, skip = 16, 2, 1
		case 'u':
			base, width, skip = 16, 4, 1
		case 'U':
			base, width, skip = 16, 8, 1
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
				continue
			}
		}
		j := i + skip
		for j < len(s) && j < i+skip+width && strings.IndexByte("0123456789abcdefABCDEF"[:base+max(0, base-10)], s[j]) >= 0 {
			j++
		}
		if base == 0 || j == i+skip {
			b.WriteByte('\\')
			b.WriteByte(s[i])
			continue
		}
		v, _ := strconv.ParseUint(s[i+skip:j], base, 32)
		if s[i] == 'u' || s[i] == 'U' {
			b.WriteRune(rune(v))
		} else {
			b.WriteByte(byte(v))
		}
		i = j - 1
	}
	return b.String()
}
