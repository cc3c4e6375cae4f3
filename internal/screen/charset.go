package screen

// Character sets that ESC ( ) * + - . designate, named by their final
// byte, with the characters they replace: DEC special graphics ('0') and
// the national replacement sets xterm.js knows. 'B' (US ASCII) replaces
// nothing and is stored as 0, "no set".
var charsets = map[byte]map[byte]rune{
	'0': {
		'`': '◆', 'a': '▒', 'b': '␉', 'c': '␌', 'd': '␍', 'e': '␊', 'f': '°', 'g': '±',
		'h': '␤', 'i': '␋', 'j': '┘', 'k': '┐', 'l': '┌', 'm': '└', 'n': '┼', 'o': '⎺',
		'p': '⎻', 'q': '─', 'r': '⎼', 's': '⎽', 't': '├', 'u': '┤', 'v': '┴', 'w': '┬',
		'x': '│', 'y': '≤', 'z': '≥', '{': 'π', '|': '≠', '}': '£', '~': '·',
	},
	'A': {'#': '£'},                                                                                                                // United Kingdom
	'4': {'#': '£', '@': '¾', '[': 'i', '\\': '½', ']': '|', '{': '¨', '|': 'f', '}': '¼', '~': '´'},                               // Dutch ('[' is "ij"; xterm.js prints its first letter)
	'C': {'[': 'Ä', '\\': 'Ö', ']': 'Å', '^': 'Ü', '`': 'é', '{': 'ä', '|': 'ö', '}': 'å', '~': 'ü'},                               // Finnish
	'R': {'#': '£', '@': 'à', '[': '°', '\\': 'ç', ']': '§', '{': 'é', '|': 'ù', '}': 'è', '~': '¨'},                               // French
	'Q': {'@': 'à', '[': 'â', '\\': 'ç', ']': 'ê', '^': 'î', '`': 'ô', '{': 'é', '|': 'ù', '}': 'è', '~': 'û'},                     // French Canadian
	'K': {'@': '§', '[': 'Ä', '\\': 'Ö', ']': 'Ü', '{': 'ä', '|': 'ö', '}': 'ü', '~': 'ß'},                                         // German
	'Y': {'#': '£', '@': '§', '[': '°', '\\': 'ç', ']': 'é', '`': 'ù', '{': 'à', '|': 'ò', '}': 'è', '~': 'ì'},                     // Italian
	'E': {'@': 'Ä', '[': 'Æ', '\\': 'Ø', ']': 'Å', '^': 'Ü', '`': 'ä', '{': 'æ', '|': 'ø', '}': 'å', '~': 'ü'},                     // Norwegian/Danish
	'Z': {'#': '£', '@': '§', '[': '¡', '\\': 'Ñ', ']': '¿', '{': '°', '|': 'ñ', '}': 'ç'},                                         // Spanish
	'H': {'@': 'É', '[': 'Ä', '\\': 'Ö', ']': 'Å', '^': 'Ü', '`': 'é', '{': 'ä', '|': 'ö', '}': 'å', '~': 'ü'},                     // Swedish
	'=': {'#': 'ù', '@': 'à', '[': 'é', '\\': 'ç', ']': 'ê', '^': 'î', '_': 'è', '`': 'ô', '{': 'ä', '|': 'ö', '}': 'ü', '~': 'û'}, // Swiss
}

func init() {
	// Alternative final bytes for the same sets.
	charsets['5'] = charsets['C']
	charsets['6'] = charsets['E']
	charsets['7'] = charsets['H']
}

// charsetTables holds each set as a flat table indexed by the byte, built
// once, so printing through a set is an array lookup.
var charsetTables [256]*[128]rune

func init() {
	for id, m := range charsets {
		t := new([128]rune)
		for b, r := range m {
			t[b] = r
		}
		charsetTables[id] = t
	}
}

// validCharset reports whether ESC ( f designates a set xterm.js knows
// (including 'B', US ASCII).
func validCharset(f byte) bool {
	return f == 'B' || charsets[f] != nil
}

// mapCharset returns what r prints as in the set (r itself when the set
// leaves it alone).
func mapCharset(set byte, r rune) rune {
	if t := charsetTables[set]; t != nil && r < 128 {
		if m := t[r]; m != 0 {
			return m
		}
	}
	return r
}
