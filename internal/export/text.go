package export

import (
	"fmt"
	"io"
	"strings"

	"termkeep/internal/outlog"
	"termkeep/internal/screen"
)

// screenOptions bound the emulator an export renders with: more history
// than the server's screen model keeps, since an export is read once.
var screenOptions = screen.Options{ScrollbackLines: 100_000, ScrollbackBytes: 32 << 20}

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
	var gaps []string
	err = r.chunks(func(c outlog.Chunk) error {
		switch c.Kind {
		case outlog.ChunkSize:
			if scr == nil {
				scr = screen.New(int(c.Cols), int(c.Rows), screenOptions)
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
			line := outlog.GapOf(c).Line()
			gaps = append(gaps, line)
			scr.Write(outlog.ScreenBytes(line))
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
		scr = screen.New(80, 24, screenOptions)
	}
	text := scr.Text(-1)
	var missing []string
	for _, g := range gaps {
		if !strings.Contains(text, g) {
			missing = append(missing, g+"\n")
		}
	}
	if r.opts.Format == Text {
		text += strings.Join(missing, "")
		if r.opts.Redactor != nil {
			// Again over what is shown: a secret drawn in pieces (by cursor
			// movements) is only whole on the screen.
			text = string(r.opts.Redactor.Redact([]byte(text)))
		}
		_, err = io.WriteString(w, text)
		return err
	}
	// A page ends with its last line of text, not the screen's blank rows.
	ansi := strings.TrimRight(scr.ANSI(-1), "\n") + "\n" + strings.Join(missing, "")
	if r.opts.Redactor != nil {
		ansi = string(r.opts.Redactor.Redact([]byte(ansi)))
	}
	cols, _ := scr.Size()
	return writeHTML(w, r.opts.Title, cols, ansi)
}
