package screen

import "unicode/utf8"

//go:generate go run ./gen -modules ../../web/node_modules

// runeWidth is the number of cells xterm.js with its Unicode 11 addon gives
// a code point: 0 for controls, combining and other zero-width characters,
// 2 for East Asian wide characters and emoji, 1 otherwise. The table is
// generated from the addon itself (gen/), so that the model and the
// browsers put every character in the same columns.
func runeWidth(r rune) int {
	if r < 0x7f {
		if r >= 0x20 {
			return 1
		}
		return 0
	}
	if r > 0x10ffff {
		return 1
	}
	return int(widthStage2[widthStage1[r>>8]][(r&0xff)>>2]>>((r&3)*2)) & 3
}

func appendRune(b []byte, r rune) []byte {
	return utf8.AppendRune(b, r)
}
