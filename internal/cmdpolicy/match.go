package cmdpolicy

import "unicode"

// A command's text, as the patterns see it, is runes with two kinds
// beyond Unicode. unknown stands for what only running the line tells (a
// variable, a substitution, a glob, xargs' input). A redirection's
// operator is kept as hard runes, which only the same character written
// in a pattern matches: a * or ? never stands for one, so "echo *" does
// not reach over ">> ~/.bashrc".
const unknown rune = -1

func hard(r rune) rune { return -r - 2 }

func isHard(r rune) bool { return r <= -2 }

// match reports whether pat matches all of s. With maybe, an unknown rune
// of s stands for any text, and match reports whether some value of the
// unknowns makes pat match (a deny pattern is refused on a chance);
// without, only a * of pat matches an unknown (an allow pattern must
// cover every value). Dynamic programming over pat and s: len(pat)*len(s)
// steps, linear memory.
func match(pat, s []rune, maybe bool) bool {
	n := len(s)
	next, cur := make([]bool, n+1), make([]bool, n+1) // rows i+1 and i: does pat[i:] match s[j:]
	next[n] = true
	for j := n - 1; j >= 0; j-- {
		next[j] = maybe && s[j] == unknown && next[j+1]
	}
	for i := len(pat) - 1; i >= 0; i-- {
		pc := pat[i]
		cur[n] = pc == '*' && next[n]
		for j := n - 1; j >= 0; j-- {
			c := s[j]
			switch {
			case pc == '*':
				cur[j] = next[j] || !isHard(c) && cur[j+1]
			case c == unknown:
				// Empty, or the first character of what pat[i:] needs.
				cur[j] = maybe && (cur[j+1] || next[j])
			case pc == '?':
				cur[j] = c >= 0 && next[j+1]
			default:
				cur[j] = (c == pc || c == hard(pc)) && next[j+1]
			}
		}
		next, cur = cur, next
	}
	return next[0]
}

// matches reports whether pat matches the command text s whole or its
// first words.
func matches(pat string, s []rune, maybe bool) bool {
	p := []rune(pat)
	return match(p, s, maybe) || match(append(p, ' ', '*'), s, maybe)
}

// glob matches s against pat, where * is any run of characters and ? one
// character.
func glob(pat, s string) bool { return match([]rune(pat), []rune(s), false) }

// textOf joins words with single blanks (any run of white space inside a
// word becomes one too, as in a pattern) and appends the redirections that
// write files.
func textOf(words []word, writes []redir) []rune {
	var t []rune
	add := func(rs []rune) {
		for _, r := range rs {
			if r >= 0 && unicode.IsSpace(r) {
				r = ' '
			}
			if r == ' ' && (len(t) == 0 || t[len(t)-1] == ' ') {
				continue
			}
			t = append(t, r)
		}
	}
	for _, w := range words {
		add(w.text)
		add([]rune{' '})
	}
	for _, r := range writes {
		for _, c := range r.op {
			t = append(t, hard(c))
		}
		t = append(t, ' ')
		add(r.target.text)
		add([]rune{' '})
	}
	for len(t) > 0 && t[len(t)-1] == ' ' {
		t = t[:len(t)-1]
	}
	return t
}
