package cmdpolicy

import (
	"fmt"
	"regexp"
	"strings"
)

// Split reads a command line as /bin/sh splits it into simple commands
// and words: quotes and backslashes removed, commands separated by ; & |
// newlines and parentheses (so && || |& and subshells too), comments left
// out. Leading variable assignments and the keywords that may begin a
// command (`if`, `then`, `while`, `!`, `{` ...) are dropped, so that what
// is left starts with the program. $VAR stays as written: its value is not
// known here. A command substitution is ErrSubstitution; an unterminated
// quote is an error.
func Split(line string) ([][]string, error) {
	var (
		cmds   [][]string
		words  []string
		word   strings.Builder
		inWord bool
		// last is the previous character when it was a bare one (not
		// quoted, not escaped): after > or <, & and | belong to a
		// redirection (2>&1, >|), not between commands.
		last byte
	)
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if w := trimLead(words); len(w) > 0 {
			cmds = append(cmds, w)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		redir := last == '>' || last == '<'
		last = 0
		switch {
		case c == ' ' || c == '\t':
			endWord()
		case redir && (c == '&' || c == '|'):
			word.WriteByte(c)
			inWord = true
		case c == '\n' || c == ';' || c == '&' || c == '|' || c == ')':
			endCmd()
		case c == '(':
			if i > 0 && (line[i-1] == '<' || line[i-1] == '>' || line[i-1] == '$') {
				return nil, ErrSubstitution
			}
			endCmd()
		case c == '`':
			return nil, ErrSubstitution
		case c == '#' && !inWord:
			for i < len(line) && line[i] != '\n' {
				i++
			}
			endCmd()
		case c == '\\':
			i++
			if i < len(line) && line[i] != '\n' { // backslash-newline joins lines
				word.WriteByte(line[i])
				inWord = true
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("the command line has an unterminated ' quote")
			}
			word.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += 1 + j
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(line); i++ {
				d := line[i]
				if d == '"' {
					closed = true
					break
				}
				if d == '`' || d == '$' && i+1 < len(line) && line[i+1] == '(' {
					return nil, ErrSubstitution
				}
				if d == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\\n", line[i+1]) >= 0 {
					i++
					if line[i] == '\n' {
						continue
					}
					d = line[i]
				}
				word.WriteByte(d)
			}
			if !closed {
				return nil, fmt.Errorf("the command line has an unterminated \" quote")
			}
		default:
			word.WriteByte(c)
			inWord = true
			last = c
		}
	}
	endCmd()
	return cmds, nil
}

// keywords may begin a command in front of the program.
var keywords = map[string]bool{"!": true, "{": true, "}": true, "if": true, "then": true, "else": true, "elif": true, "fi": true,
	"do": true, "done": true, "while": true, "until": true, "time": true}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func trimLead(words []string) []string {
	for len(words) > 0 && (keywords[words[0]] || assignment.MatchString(words[0])) {
		words = words[1:]
	}
	return words
}
