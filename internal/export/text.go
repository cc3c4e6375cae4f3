package export

import (
	"fmt"
	"io"
	"math"
	"strings"

	"termkeep/internal/outlog"
	"termkeep/internal/screen"
)

// DefaultMaxLines is the history txt and html keep above the screen when
// not told otherwise: ten times the server's screen model's.
const DefaultMaxLines = 100_000

// bytesPerLine bounds the memory of an export's history by its lines: at
// DefaultMaxLines, the 32 MiB it always had.
const bytesPerLine = 336

// screenOptions bound the emulator an export renders with, for a history
// of maxLines (Options.MaxLines).
func screenOptions(maxLines int) screen.Options {
	switch {
	case maxLines == 0:
		maxLines = DefaultMaxLines
	case maxLines < 0:
		return screen.Options{ScrollbackLines: math.MaxInt, ScrollbackBytes: math.MaxInt}
	}
	return screen.Options{ScrollbackLines: maxLines, ScrollbackBytes: max(32<<20, min(maxLines, math.MaxInt/bytesPerLine)*bytesPerLine)}
}

// CutLine is the line that stands at the top of a txt or html export for
// the n oldest lines of history it left out, over its limit of maxLines
// (Options.MaxLines).
func CutLine(n, maxLines int) string {
	unit := "lines"
	if n == 1 {
		unit = "line"
	}
	return fmt.Sprintf("[termkeep: %d %s left out (more history than the export keeps: --max-lines %d)]", n, unit, maxLines)
}

// screen renders the range with the terminal emulator termkeep's screen
// model uses, at the log's sizes, and writes the scrollback and screen at
// its end: as text (txt), as the capture command prints it, or as an HTML
// page (html). A gap is fed to the emulator as a line of its own; when
// later output has drawn over that line, it is added at the end, so a gap
// is always visible.
func (r *run) screen(w io.Writer) (err error) {
	var scr *screen.Screen
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("export: the terminal emulator failed: %v", p)
		}
	}()
	feed := func(_ uint64, p []byte) error {
		scr.Write(p)
		return nil
	}
	write := feed
	if r.opts.Redactor != nil {
		write = redacted(r.opts.Redactor, feed)
	}
	opts := screenOptions(r.opts.MaxLines)
	// Each gap's line, and where it went: its line of the whole history
	// (lines dropped, then kept, then the screen's rows), or -1 when it was
	// drawn on the alternate screen.
	type gapLine struct {
		text string
		at   int
	}
	var gaps []gapLine
	err = r.chunks(func(c outlog.Chunk) error {
		switch c.Kind {
		case outlog.ChunkSize:
			if scr == nil {
				scr = screen.New(int(c.Cols), int(c.Rows), opts)
				return nil
			}
			// What came before the change is drawn at the old size.
			if err := write(c.Offset, nil); err != nil {
				return err
			}
			if cols, rows := scr.Size(); cols != int(c.Cols) || rows != int(c.Rows) {
				scr.Resize(int(c.Cols), int(c.Rows))
			}
		case outlog.ChunkData:
			return write(c.Offset, c.Data)
		case outlog.ChunkGap:
			if err := write(c.Offset, nil); err != nil {
				return err
			}
			g := gapLine{text: outlog.GapOf(c).Line(), at: -1}
			scr.Write(outlog.ScreenBytes(g.text))
			if !scr.AltScreen() {
				_, y := scr.CursorPosition() // on the row after the line
				g.at = scr.ScrollbackDropped() + scr.ScrollbackLines() + y - 1
			}
			gaps = append(gaps, g)
		}
		return nil
	})
	if err == nil {
		err = write(r.opts.To, nil)
	}
	if err != nil {
		return err
	}
	if scr == nil {
		scr = screen.New(80, 24, opts)
	}
	text := scr.Text(-1)
	// A gap whose line went with the history left out is named above the
	// cut, in its place in the stream; one that later output drew over,
	// at the end.
	var above, missing []string
	left := scr.ScrollbackDropped()
	for _, g := range gaps {
		switch {
		case g.at >= 0 && g.at < left:
			above = append(above, g.text+"\n")
		case !strings.Contains(text, g.text):
			missing = append(missing, g.text+"\n")
		}
	}
	if left > 0 {
		r.res.LinesLeftOut = left
		above = append(above, CutLine(left, opts.ScrollbackLines)+"\n")
	}
	top := strings.Join(above, "")
	if r.opts.Format == Text {
		text = top + text + strings.Join(missing, "")
		if r.opts.Redactor != nil {
			// Again over what is shown: a secret drawn in pieces (by cursor
			// movements) is only whole on the screen.
			text = string(r.opts.Redactor.Redact([]byte(text)))
		}
		_, err = io.WriteString(w, text)
		return err
	}
	// A page ends with its last line of text, not the screen's blank rows.
	ansi := top + strings.TrimRight(scr.ANSI(-1), "\n") + "\n" + strings.Join(missing, "")
	if r.opts.Redactor != nil {
		ansi = string(r.opts.Redactor.Redact([]byte(ansi)))
	}
	cols, _ := scr.Size()
	return writeHTML(w, r.opts.Title, cols, ansi)
}
