package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"termkeep/internal/client"
	"termkeep/internal/export"
)

// export reads a session's log; it writes nothing to the session.
func newExportCmd(g *globals) *cobra.Command {
	var (
		format, from, to, output string
		redact                   bool
		patterns                 []string
		maxLines                 int
	)
	cmd := &cobra.Command{
		Use:   "export SESSION --format cast|txt|html|raw [--from TIME|OFFSET] [--to TIME|OFFSET] [--max-lines N] [--redact] [--redact-pattern RE ...] [-o FILE]",
		Short: "Write a session's output as a recording, text, a web page or its raw bytes",
		Long: `Write what a session printed, from its output log, in one of four formats:

  cast  an asciicast v2 recording (asciinema play FILE), each chunk at the
        time it was logged (to a tenth of a second), with the terminal's resizes
  txt   the text of the scrollback and screen at the end, as capture prints it
  html  the same with colors and attributes: a page of its own, no scripts
  raw   the exact bytes

--from and --to bound the range: a byte offset, an RFC 3339 time, or a
duration before now such as -10m (default: the session's first byte, and the
end). Without --format, the extension of -o FILE names it.

What limits the output: the log keeps only the newest output per session
(termkeep serve --log-retention, 64MiB by default), and what it dropped is
marked at the start by a line such as "[termkeep: 1234 bytes no longer
retained]". txt and html keep at most --max-lines lines of history above the
screen (default 100000; 0: no limit, for which the server holds the whole
history in memory), and about 336 bytes a line of it (32 MiB at the default):
the oldest lines over that are left out under a line such as "[termkeep:
1899976 lines left out (more history than the export keeps: --max-lines
100000)]", and a warning on stderr says how many. cast and raw have no such
limit.

Secrets are replaced by [REDACTED] by default in cast, txt and html (not in
raw): AWS keys, GitHub, GitLab and Slack tokens, JWTs, OpenAI (sk-, sk-proj-),
Anthropic (sk-ant-), Stripe (sk_live_, rk_live_) and npm (npm_) keys, passwords
in URLs (https://user:PASSWORD@host), password=/passwd:/secret=/token= values
and PEM private key blocks, plus each --redact-pattern (Go regexp syntax; a
group named "secret" narrows what is replaced). --redact=false turns it off,
--redact turns it on for raw. Redaction works on each line's text with its
escape sequences left in place, and on what the line shows when it was drawn
with backspaces or cursor moves.

A range whose bytes were never logged (a full disk), were dropped by retention
or sit in a damaged segment is marked by a line such as
"[termkeep: 1234 bytes not logged (disk full)]" (raw: skipped), and named in a
warning on stderr. The file (mode 0600) appears only once the export is whole.`,
		Args: exactArgs(1, "a SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "" && output != "" && output != "-" {
				if f, err := export.ParseFormat(strings.TrimPrefix(filepath.Ext(output), ".")); err == nil {
					format = string(f)
				}
			}
			f, err := export.ParseFormat(format)
			if err != nil {
				return usageErr("%v (--format)", err)
			}
			req := client.ExportRequest{Format: string(f), Patterns: patterns}
			now := time.Now()
			for _, b := range []struct {
				flag, v string
				out     *string
			}{{"--from", from, &req.From}, {"--to", to, &req.To}} {
				if b.v == "" {
					continue
				}
				bound, err := export.ParseBound(b.v, now)
				if err != nil {
					return usageErr("%s: %v", b.flag, err)
				}
				*b.out = bound.String() // a duration becomes the time it means now
			}
			if cmd.Flags().Changed("redact") {
				if !redact && len(patterns) > 0 {
					return usageErr("--redact-pattern hides secrets: drop --redact=false")
				}
				req.Redact = &redact
			}
			if _, err := export.NewRedactor(patterns...); err != nil {
				return usageErr("--redact-pattern: %v", err)
			}
			if cmd.Flags().Changed("max-lines") {
				if maxLines < 0 {
					return usageErr("--max-lines %d: give a number of lines, or 0 for no limit", maxLines)
				}
				if f != export.Text && f != export.HTML {
					return usageErr("--max-lines bounds the history of txt and html; a %s export has no limit", f)
				}
				req.MaxLines = &maxLines
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			var bar *progressBar
			if term.IsTerminal(int(os.Stderr.Fd())) {
				bar = &progressBar{start: time.Now()}
				req.Progress = bar.set
				defer bar.clear()
			}
			exp, err := c.Export(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			defer exp.Close()

			var dst io.Writer = os.Stdout
			var tmp *os.File
			if output != "" && output != "-" {
				// Written beside the file and renamed at the end: a failed
				// export leaves no half file.
				tmp, err = os.CreateTemp(filepath.Dir(output), "."+filepath.Base(output)+".*.tmp")
				if err != nil {
					return fmt.Errorf("create %s: %w", output, err)
				}
				defer func() {
					if tmp != nil {
						tmp.Close()
						os.Remove(tmp.Name())
					}
				}()
				dst = tmp
			}
			var body io.Reader = exp
			if bar != nil {
				body = io.TeeReader(exp, bodyProgress(f, exp, bar))
			}
			if _, err := io.Copy(dst, body); err != nil {
				return fmt.Errorf("export %s: %w", args[0], err)
			}
			if err := exp.Err(); err != nil {
				return fmt.Errorf("export %s cut short: %v", args[0], err)
			}
			if bar != nil {
				bar.clear()
			}
			for _, gap := range exp.Gaps() {
				what := "the export marks them with a line"
				if f == export.Raw {
					what = "the export skips them"
				}
				fmt.Fprintf(os.Stderr, "termkeep: warning: bytes %d-%d %s; %s\n", gap.Start, gap.End, gap.Reason, what)
			}
			if n := exp.LinesLeftOut(); n > 0 {
				fmt.Fprintf(os.Stderr, "termkeep: warning: the %d oldest lines of history are left out, over the export's limit; a line at the top says so (--max-lines 0 keeps every line)\n", n)
			}
			if tmp != nil {
				if err := tmp.Close(); err != nil {
					return fmt.Errorf("write %s: %w", output, err)
				}
				if err := os.Rename(tmp.Name(), output); err != nil {
					return fmt.Errorf("write %s: %w", output, err)
				}
				tmp = nil
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&format, "format", "f", "", "cast, txt, html or raw (default: from -o FILE's extension)")
	fl.StringVar(&from, "from", "", "start: an offset, an RFC 3339 time or a duration before now (-10m)")
	fl.StringVar(&to, "to", "", "end (exclusive): an offset, an RFC 3339 time or a duration before now")
	fl.BoolVar(&redact, "redact", false, "replace secrets by [REDACTED] (default: on for cast, txt and html, off for raw)")
	fl.StringArrayVar(&patterns, "redact-pattern", nil, "another secret to hide: a Go regexp (repeatable)")
	fl.IntVar(&maxLines, "max-lines", export.DefaultMaxLines, "txt, html: lines of history kept above the screen, the oldest over it left out and marked (0: no limit)")
	fl.StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	return cmd
}

// bodyProgress counts an export's body toward the progress bar: raw bytes
// are the log's own; a cast's events carry about as many bytes of text as
// the log held; a txt or html body comes once the work is done.
func bodyProgress(f export.Format, exp *client.Export, bar *progressBar) io.Writer {
	var n uint64
	var cc castCounter
	return writerFunc(func(p []byte) (int, error) {
		switch f {
		case export.Raw:
			n += uint64(len(p))
		case export.Cast:
			cc.Write(p)
			n = cc.n
		default:
			return len(p), nil
		}
		bar.set(min(exp.Done+n, exp.Total), exp.Total)
		return len(p), nil
	})
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// castCounter counts the characters inside the JSON strings of a cast
// stream (an escape counts as one).
type castCounter struct {
	inStr, esc bool
	hex        int // hex digits of a \u escape still to skip
	n          uint64
}

func (c *castCounter) Write(p []byte) {
	for _, b := range p {
		switch {
		case !c.inStr:
			c.inStr = b == '"'
		case c.hex > 0:
			c.hex--
		case c.esc:
			c.esc = false
			c.n++
			if b == 'u' {
				c.hex = 4
			}
		case b == '\\':
			c.esc = true
		case b == '"':
			c.inStr = false
		default:
			c.n++
		}
	}
}

// progressBar draws an export's progress on stderr (a terminal) once it
// has taken a second: bytes of log done of the total.
type progressBar struct {
	mu          sync.Mutex // guards the fields below: the server's progress comes from the HTTP client's goroutine
	start       time.Time
	drawn       time.Time
	shown       bool
	done, total uint64
}

func (p *progressBar) set(done, total uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, total
	now := time.Now()
	if total == 0 || now.Sub(p.start) < time.Second || now.Sub(p.drawn) < 100*time.Millisecond {
		return
	}
	p.drawn, p.shown = now, true
	pct := min(done*100/total, 100)
	const width = 30
	bar := strings.Repeat("#", int(pct*width/100)) + strings.Repeat("-", width-int(pct*width/100))
	fmt.Fprintf(os.Stderr, "\rexporting %s / %s [%s] %3d%%", mib(done), mib(total), bar, pct)
}

// clear removes the bar.
func (p *progressBar) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(os.Stderr, "\r\x1b[K")
		p.shown = false
	}
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
