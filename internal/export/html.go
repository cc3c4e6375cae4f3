package export

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
)

// The page's colors: the dark theme of termkeep's browser terminal
// (web/src/theme.ts), so an export looks as the session did there.
const (
	defaultFG = "#d6dde6"
	defaultBG = "#0d1117"
)

var palette16 = [16]string{
	"#1b2029", "#f47067", "#57c278", "#d9b45a", "#6ea8fe", "#c38cf0", "#4fc1c9", "#c9d1d9",
	"#6e7681", "#ff8f87", "#7ee09b", "#f0cf78", "#9cc5ff", "#dcb0ff", "#7fe0e6", "#f0f6fc",
}

// color is an SGR color: the default, a palette index or an RGB value.
type color struct {
	kind uint8 // colorDefault, colorPalette, colorRGB
	v    uint32
}

const (
	colorDefault = iota
	colorPalette
	colorRGB
)

// hex returns c as CSS, or def for the default color.
func (c color) hex(def string) string {
	switch c.kind {
	case colorPalette:
		v := c.v & 0xff
		switch {
		case v < 16:
			return palette16[v]
		case v < 232:
			v -= 16
			level := func(x uint32) uint32 {
				if x == 0 {
					return 0
				}
				return 55 + 40*x
			}
			return fmt.Sprintf("#%02x%02x%02x", level(v/36), level(v/6%6), level(v%6))
		default:
			g := 8 + 10*(v-232)
			return fmt.Sprintf("#%02x%02x%02x", g, g, g)
		}
	case colorRGB:
		return fmt.Sprintf("#%06x", c.v&0xffffff)
	}
	return def
}

// cellStyle is what SGR sets.
type cellStyle struct {
	fg, bg, ulColor                                         color
	bold, dim, italic, blink, inverse, hidden, strike, over bool
	ul                                                      uint8 // underline: 0 none, 1 single, 2 double, 3 curly, 4 dotted, 5 dashed
}

// sgr applies an SGR sequence's parameters.
func (st *cellStyle) sgr(params string) {
	fields := strings.Split(params, ";")
	for i := 0; i < len(fields); i++ {
		sub := strings.Split(fields[i], ":")
		n, _ := strconv.Atoi(sub[0])
		switch {
		case n == 0:
			*st = cellStyle{}
		case n == 1:
			st.bold = true
		case n == 2:
			st.dim = true
		case n == 3:
			st.italic = true
		case n == 4:
			st.ul = 1
			if len(sub) > 1 {
				u, _ := strconv.Atoi(sub[1])
				st.ul = uint8(min(max(u, 0), 5))
			}
		case n == 5 || n == 6:
			st.blink = true
		case n == 7:
			st.inverse = true
		case n == 8:
			st.hidden = true
		case n == 9:
			st.strike = true
		case n == 21:
			st.ul = 2
		case n == 22:
			st.bold, st.dim = false, false
		case n == 23:
			st.italic = false
		case n == 24:
			st.ul = 0
		case n == 25:
			st.blink = false
		case n == 27:
			st.inverse = false
		case n == 28:
			st.hidden = false
		case n == 29:
			st.strike = false
		case n >= 30 && n <= 37:
			st.fg = color{colorPalette, uint32(n - 30)}
		case n == 39:
			st.fg = color{}
		case n >= 40 && n <= 47:
			st.bg = color{colorPalette, uint32(n - 40)}
		case n == 49:
			st.bg = color{}
		case n == 53:
			st.over = true
		case n == 55:
			st.over = false
		case n == 59:
			st.ulColor = color{}
		case n >= 90 && n <= 97:
			st.fg = color{colorPalette, uint32(n - 90 + 8)}
		case n >= 100 && n <= 107:
			st.bg = color{colorPalette, uint32(n - 100 + 8)}
		case n == 38 || n == 48 || n == 58:
			var c color
			if len(sub) > 1 {
				c = extColor(sub[1:])
			} else {
				var used int
				c, used = extColorFields(fields[i+1:])
				i += used
			}
			switch n {
			case 38:
				st.fg = c
			case 48:
				st.bg = c
			default:
				st.ulColor = c
			}
		}
	}
}

// extColor reads "5:N" or "2:[colorspace:]R:G:B" sub-parameters.
func extColor(sub []string) color {
	num := func(s string) uint32 {
		v, _ := strconv.Atoi(s)
		return uint32(min(max(v, 0), 255))
	}
	switch {
	case sub[0] == "5" && len(sub) >= 2:
		return color{colorPalette, num(sub[1])}
	case sub[0] == "2" && len(sub) >= 4:
		rgb := sub[len(sub)-3:]
		return color{colorRGB, num(rgb[0])<<16 | num(rgb[1])<<8 | num(rgb[2])}
	}
	return color{}
}

// extColorFields reads "5;N" or "2;R;G;B" parameters, returning how many
// it used.
func extColorFields(f []string) (color, int) {
	switch {
	case len(f) >= 2 && f[0] == "5":
		return extColor(f[:2]), 2
	case len(f) >= 4 && f[0] == "2":
		return extColor(f[:4]), 4
	}
	return color{}, len(f)
}

// css returns the inline style for st ("" for the default look). Bold
// text in one of the first 8 colors is drawn in its bright variant, as
// xterm.js does by default.
func (st cellStyle) css() string {
	fg, bg := st.fg, st.bg
	if st.bold && fg.kind == colorPalette && fg.v < 8 {
		fg.v += 8
	}
	fgc, bgc := fg.hex(defaultFG), bg.hex("")
	if st.inverse {
		fgc, bgc = bg.hex(defaultBG), fg.hex(defaultFG)
	}
	var b strings.Builder
	switch {
	case st.hidden:
		b.WriteString("color:transparent;")
	case st.dim:
		b.WriteString("color:" + fgc + "80;")
	case fgc != defaultFG:
		b.WriteString("color:" + fgc + ";")
	}
	if bgc != "" {
		b.WriteString("background-color:" + bgc + ";")
	}
	if st.bold {
		b.WriteString("font-weight:bold;")
	}
	if st.italic {
		b.WriteString("font-style:italic;")
	}
	var lines []string
	if st.ul > 0 {
		lines = append(lines, "underline")
	}
	if st.strike {
		lines = append(lines, "line-through")
	}
	if st.over {
		lines = append(lines, "overline")
	}
	if len(lines) > 0 {
		b.WriteString("text-decoration-line:" + strings.Join(lines, " ") + ";")
		if s := [...]string{"", "", "double", "wavy", "dotted", "dashed"}[st.ul]; s != "" {
			b.WriteString("text-decoration-style:" + s + ";")
		}
		if st.ulColor.kind != colorDefault {
			b.WriteString("text-decoration-color:" + st.ulColor.hex("") + ";")
		}
	}
	return strings.TrimSuffix(b.String(), ";")
}

// writeHTML writes a self-contained page (inline CSS, no script) showing
// text, lines with SGR sequences as the screen package's ANSI renders
// them, on a dark background like a terminal's. Every character of the
// text is escaped; sequences other than SGR are dropped.
func writeHTML(w io.Writer, title string, cols int, text string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if title == "" {
		title = "termkeep session"
	}
	fmt.Fprintf(bw, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="termkeep export">
<title>%s</title>
<style>
html,body{margin:0;background:%s;color:%s}
pre{margin:0;padding:16px;min-width:%dch;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",monospace;font-size:13px;line-height:1.25;white-space:pre}
</style>
</head>
<body>
<pre>
`, html.EscapeString(title), defaultBG, defaultFG, cols)
	var st cellStyle
	open := false // a span is open
	cur := ""     // its style
	for len(text) > 0 {
		i := strings.IndexByte(text, 0x1b)
		if i < 0 {
			i = len(text)
		}
		if i > 0 {
			css := st.css()
			if open && css != cur {
				bw.WriteString("</span>")
				open = false
			}
			if !open && css != "" {
				fmt.Fprintf(bw, `<span style="%s">`, css)
				open, cur = true, css
			}
			// A line break closes nothing: spans may run across lines.
			bw.WriteString(html.EscapeString(text[:i]))
			text = text[i:]
			continue
		}
		// ESC: a CSI up to its final byte, or anything else dropped.
		j := 1
		if len(text) > 1 && text[1] == '[' {
			j = 2
			for j < len(text) && (text[j] < 0x40 || text[j] > 0x7e) {
				j++
			}
			if j < len(text) {
				if text[j] == 'm' {
					st.sgr(text[2:j])
				}
				j++
			}
		}
		text = text[j:]
	}
	if open {
		bw.WriteString("</span>")
	}
	bw.WriteString("</pre>\n</body>\n</html>\n")
	return bw.Flush()
}
