package export

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/outlog/outlogtest"
	"termkeep/internal/screen"
	"termkeep/internal/vtscan"
)

var t0 = time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)

// step is one thing a script does to a log: wait, then append (or mark,
// or resize).
type step struct {
	after      time.Duration
	data       string
	mark       bool
	cols, rows uint16
}

// writeLog writes a log with the steps through outlog with a fake clock
// starting at t0, and returns its directory and every byte logged.
func writeLog(t testing.TB, opts outlog.Options, steps ...step) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	now := t0
	opts.Now = func() time.Time { return now }
	if opts.Cols == 0 {
		opts.Cols, opts.Rows = 80, 24
	}
	l, err := outlog.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var all []byte
	for _, s := range steps {
		now = now.Add(s.after)
		switch {
		case s.cols > 0:
			err = l.SetSize(s.cols, s.rows)
		case s.mark:
			_, err = l.AppendMark([]byte(s.data))
		default:
			_, err = l.Append([]byte(s.data))
		}
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s.data...)
	}
	return dir, all
}

func openRO(t testing.TB, dir string) *outlog.Log {
	t.Helper()
	l, err := outlog.Open(dir, outlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// exportAll exports the whole retained log of dir.
func exportAll(t testing.TB, dir string, f Format, red *Redactor) (string, Result) {
	t.Helper()
	l := openRO(t, dir)
	var b bytes.Buffer
	res, err := Export(&b, l, Options{Format: f, From: l.First(), To: l.End(), Redactor: red, Title: "test"})
	if err != nil {
		t.Fatalf("export %s: %v", f, err)
	}
	return b.String(), res
}

// castEvent is one parsed asciicast event.
type castEvent struct {
	t    float64
	typ  string
	data string
}

// parseCast checks that s is an asciicast v2 file (a header object, then
// events [time, type, data] in time order) and returns its parts.
func parseCast(t testing.TB, s string) (map[string]any, []castEvent) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 16<<20)
	if !sc.Scan() {
		t.Fatalf("cast has no header: %q", s)
	}
	var hdr map[string]any
	if err := json.Unmarshal(sc.Bytes(), &hdr); err != nil {
		t.Fatalf("cast header %q: %v", sc.Text(), err)
	}
	if hdr["version"] != 2.0 || hdr["width"].(float64) < 1 || hdr["height"].(float64) < 1 {
		t.Fatalf("cast header %v", hdr)
	}
	var evs []castEvent
	last := 0.0
	for sc.Scan() {
		var raw []any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil || len(raw) != 3 {
			t.Fatalf("cast event %q: %v", sc.Text(), err)
		}
		tm, ok1 := raw[0].(float64)
		typ, ok2 := raw[1].(string)
		data, ok3 := raw[2].(string)
		if !ok1 || !ok2 || !ok3 || (typ != "o" && typ != "r" && typ != "m") {
			t.Fatalf("cast event %q", sc.Text())
		}
		if tm < last {
			t.Fatalf("cast event at %f after one at %f", tm, last)
		}
		last = tm
		evs = append(evs, castEvent{tm, typ, data})
	}
	return hdr, evs
}

func outputOf(evs []castEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e.typ == "o" {
			b.WriteString(e.data)
		}
	}
	return b.String()
}

// decoded is b as UTF-8 with U+FFFD for each invalid byte.
func decoded(b []byte) string { return string([]rune(string(b))) }

// A script that wrote with known pauses: every event is at its time
// (within the Time records' second, here well inside 250 ms), resizes are
// events, and the data is the log's bytes.
func TestCastTimes(t *testing.T) {
	steps := []step{
		{after: 0, data: "one\r\n"},
		{after: 1 * time.Second, data: "two\r\n"},
		{after: 100 * time.Millisecond, data: "two and a bit\r\n"},
		{after: 1200 * time.Millisecond, cols: 100, rows: 30},
		{after: 0, data: "three\r\n"},
		{after: 2 * time.Second, data: "banner\r\n", mark: true},
		{after: 3500 * time.Millisecond, data: "four\r\n"},
	}
	dir, all := writeLog(t, outlog.Options{}, steps...)
	out, res := exportAll(t, dir, Cast, nil)
	if len(res.Gaps) != 0 {
		t.Fatalf("gaps: %v", res.Gaps)
	}
	hdr, evs := parseCast(t, out)
	if hdr["width"] != 80.0 || hdr["height"] != 24.0 || hdr["timestamp"] != float64(t0.Unix()) || hdr["title"] != "test" {
		t.Fatalf("header %v", hdr)
	}
	if env, _ := hdr["env"].(map[string]any); env["TERM"] != "xterm-256color" {
		t.Fatalf("header env %v", hdr["env"])
	}
	if got := outputOf(evs); got != string(all) {
		t.Fatalf("cast data %q, want %q", got, all)
	}
	want := map[string]time.Duration{"one": 0, "two": time.Second, "two and a bit": 1100 * time.Millisecond,
		"three": 2300 * time.Millisecond, "banner": 4300 * time.Millisecond, "four": 7800 * time.Millisecond}
	for _, e := range evs {
		text := strings.TrimSpace(e.data)
		if w, ok := want[text]; ok {
			if d := math.Abs(e.t - w.Seconds()); d > 0.25 {
				t.Errorf("%q at %.3fs, want %.3fs", text, e.t, w.Seconds())
			}
			delete(want, text)
		}
	}
	if len(want) != 0 {
		t.Errorf("no event for %v", want)
	}
	resized := false
	for _, e := range evs {
		if e.typ == "r" {
			if e.data != "100x30" || math.Abs(e.t-2.3) > 0.25 {
				t.Errorf("resize event %+v", e)
			}
			resized = true
		}
	}
	if !resized {
		t.Error("no resize event")
	}
}

// A character split between two appends is carried to the next event;
// every event's data is valid UTF-8 and the whole is the log's text.
func TestCastUTF8Split(t *testing.T) {
	dir, all := writeLog(t, outlog.Options{},
		step{data: "h\xc3"}, step{after: time.Second, data: "\xa9llo \xe2\x82"}, step{after: time.Second, data: "\xac \xf0\x9f"},
		step{after: time.Second, data: "\x98\x80!"})
	_, evs := parseCast(t, mustCast(t, dir))
	if got := outputOf(evs); got != "héllo € 😀!" || got != decoded(all) {
		t.Fatalf("cast data %q", got)
	}
	if evs[0].data != "h" || evs[1].data != "éllo " {
		t.Fatalf("events %+v", evs)
	}
}

func mustCast(t *testing.T, dir string) string {
	out, _ := exportAll(t, dir, Cast, nil)
	return out
}

// Invalid bytes become U+FFFD, one each, as a UTF-8 decoder reads them; an
// incomplete character at the very end too.
func TestCastInvalidBytes(t *testing.T) {
	dir, all := writeLog(t, outlog.Options{}, step{data: "a\xffb\xc3(\x80"}, step{data: "\x1b[31mred\x00\x7f\"\\"}, step{data: "end\xe2\x82"})
	_, evs := parseCast(t, mustCast(t, dir))
	got := outputOf(evs)
	if got != decoded(all) || !strings.HasPrefix(got, "a\ufffdb\ufffd(\ufffd") || !strings.HasSuffix(got, "end\ufffd\ufffd") {
		t.Fatalf("cast data %q, want %q", got, decoded(all))
	}
}

// txt is what the capture command renders: the emulator's text of the
// scrollback and screen at the end, at the log's sizes; a full-screen
// program that has exited leaves the shell's screen.
func TestText(t *testing.T) {
	var steps []step
	for i := range 40 {
		steps = append(steps, step{after: 10 * time.Millisecond, data: fmt.Sprintf("line %d\r\n", i)})
	}
	steps = append(steps,
		step{data: "\x1b[?1049h\x1b[H\x1b[2Jfull screen \x1b[7mprogram\x1b[0m"},
		step{cols: 60, rows: 20},
		step{data: "\x1b[5;5Hmore"},
		step{data: "\x1b[?1049l$ after\r\n$ "},
	)
	dir, all := writeLog(t, outlog.Options{}, steps...)
	got, _ := exportAll(t, dir, Text, nil)
	scr := screen.New(80, 24, screenOptions(0))
	i := bytes.Index(all, []byte("\x1b[5;5H"))
	scr.Write(all[:i])
	scr.Resize(60, 20)
	scr.Write(all[i:])
	if want := scr.Text(-1); got != want {
		t.Fatalf("txt:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(got, "full screen") || !strings.Contains(got, "line 0\n") || !strings.Contains(got, "$ after\n") {
		t.Fatalf("txt:\n%s", got)
	}
}

// html is a page of its own: escaped text, colors and attributes as
// inline CSS, a dark background.
func TestHTML(t *testing.T) {
	dir, _ := writeLog(t, outlog.Options{},
		step{data: "<script>alert(1)</script> & \"quotes\"\r\n"},
		step{data: "\x1b[1;31mbold red\x1b[0m \x1b[4;38;2;1;2;3mrgb\x1b[0m \x1b[7minverse\x1b[0m plain\r\n"},
	)
	got, _ := exportAll(t, dir, HTML, nil)
	for _, want := range []string{
		"<!DOCTYPE html>", "<title>test</title>", "background:#0d1117",
		"&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;quotes&#34;",
		`<span style="color:#ff8f87;font-weight:bold">bold red</span>`,
		`<span style="color:#010203;text-decoration-line:underline">rgb</span>`,
		`<span style="color:#0d1117;background-color:#d6dde6">inverse</span> plain`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("html lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "<script") || strings.Contains(got, "\x1b") {
		t.Errorf("html has raw markup or escapes:\n%s", got)
	}
}

// Bytes retention dropped and a damaged segment show as a line in the
// formats people read, as gaps in the result in all; the bytes around are
// never glued together.
func TestGapMarkers(t *testing.T) {
	var steps []step
	for i := range 2000 {
		steps = append(steps, step{after: 10 * time.Millisecond, data: fmt.Sprintf("line %04d %s\r\n", i, strings.Repeat("x", 40))})
	}
	dir, all := writeLog(t, outlog.Options{SegmentSize: 8 << 10, Retention: 40 << 10}, steps...)
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segs) < 4 {
		t.Fatalf("%d segments", len(segs))
	}
	// Damage the middle of the second retained segment.
	b, _ := os.ReadFile(segs[1])
	b[len(b)/2] ^= 0x55
	os.WriteFile(segs[1], b, 0o600)

	l := openRO(t, dir)
	for _, f := range Formats {
		var out bytes.Buffer
		res, err := Export(&out, l, Options{Format: f, From: 0, To: l.End()})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(res.Gaps) != 2 || res.Gaps[0].Start != 0 || res.Gaps[0].End != l.First() ||
			res.Gaps[0].Reason != "no longer retained" || res.Gaps[1].Reason != "lost to a damaged log segment" {
			t.Fatalf("%s: gaps %+v", f, res.Gaps)
		}
		s := out.String()
		if f == Cast {
			_, evs := parseCast(t, s)
			s = outputOf(evs)
		}
		for _, g := range res.Gaps {
			line := fmt.Sprintf("[termkeep: %d bytes %s]", g.End-g.Start, g.Reason)
			if has := strings.Contains(s, line); has != (f != Raw) {
				t.Errorf("%s: gap line %q shown: %v", f, line, has)
			}
		}
		if f == Raw {
			// The bytes outside the gaps, exactly.
			want := append(bytes.Clone(all[res.Gaps[0].End:res.Gaps[1].Start]), all[res.Gaps[1].End:]...)
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("raw: %d bytes, want %d", out.Len(), len(want))
			}
		}
		if f == Cast {
			// The marker is on a line of its own.
			if !strings.Contains(s, "\r\n[termkeep: ") {
				t.Errorf("cast: gap line not on its own line")
			}
		}
	}
}

// segment encodes records in outlog's on-disk format (see its package
// comment): type, length, CRC-32C of type and payload, payload.
func segment(recs ...[]byte) []byte {
	var b []byte
	for _, r := range recs {
		typ, p := r[0], r[1:]
		b = append(b, typ)
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		c := crc32.Update(crc32.Update(0, crc32.MakeTable(crc32.Castagnoli), []byte{typ}), crc32.MakeTable(crc32.Castagnoli), p)
		b = binary.BigEndian.AppendUint32(b, c)
		b = append(b, p...)
	}
	return b
}

func timeRec(t time.Time) []byte {
	return binary.BigEndian.AppendUint64([]byte{3}, uint64(t.UnixNano()))
}
func dataRec(s string) []byte { return append([]byte{1}, s...) }
func gapRec(n uint64, reason string) []byte {
	return append(binary.BigEndian.AppendUint64([]byte{5}, n), reason...)
}
func sizeRec(c, r uint16) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16([]byte{4}, c), r)
}

// Bytes that were never logged (the disk was full) are a gap with its
// reason, in every format.
func TestGapDiskFull(t *testing.T) {
	dir := t.TempDir()
	seg := segment(timeRec(t0), sizeRec(80, 24), dataRec("before\r\n"), timeRec(t0.Add(3*time.Second)),
		gapRec(1234, "disk full"), dataRec("after\r\n"))
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.seg", 0)), seg, 0o600); err != nil {
		t.Fatal(err)
	}
	const line = "[termkeep: 1234 bytes not logged (disk full)]"
	for _, f := range Formats {
		out, res := exportAll(t, dir, f, nil)
		if len(res.Gaps) != 1 || res.Gaps[0] != (outlog.Gap{Start: 8, End: 8 + 1234, Reason: "not logged (disk full)"}) {
			t.Fatalf("%s: gaps %+v", f, res.Gaps)
		}
		switch f {
		case Raw:
			if out != "before\r\nafter\r\n" {
				t.Errorf("raw: %q", out)
			}
		case Cast:
			_, evs := parseCast(t, out)
			if got := outputOf(evs); got != "before\r\n\r\n"+line+"\r\nafter\r\n" {
				t.Errorf("cast: %q", got)
			}
			if evs[1].t != 3 {
				t.Errorf("cast: gap event at %f, want 3 (the Time record before it)", evs[1].t)
			}
		case Text:
			if !strings.HasPrefix(out, "before\n\n"+line+"\nafter\n") {
				t.Errorf("txt: %q", out)
			}
		case HTML:
			if !strings.Contains(out, escapeHTML(line)) {
				t.Errorf("html lacks the gap line: %s", out)
			}
		}
	}
}

func escapeHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Secrets are hidden in every format that redacts, though each was split
// between two appends and one has colors inside it; escape sequences
// around and inside them survive.
func TestRedaction(t *testing.T) {
	const (
		aws    = "AKIAIOSFODNN7EXAMPLE"
		github = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	)
	pem := "-----BEGIN RSA PRIVATE KEY-----\r\nMIIEpAIBAAKCAQEA75mSOBIGLINEOFBASE64\r\nqwertyuiopasdfghjklzxcvbnm\r\n-----END RSA PRIVATE KEY-----\r\n"
	dir, _ := writeLog(t, outlog.Options{},
		step{data: "$ export AWS_ACCESS_KEY_ID=" + aws[:8]},
		step{after: time.Second, data: aws[8:] + "\r\n"},
		step{after: time.Second, data: "token: \x1b[1m" + github[:10]},
		step{after: time.Second, data: "\x1b[32m" + github[10:] + "\x1b[0m done\r\n"},
		step{after: time.Second, data: "password=hunter2 \x1b[31mkeep\x1b[0m\r\n"},
		step{after: time.Second, data: pem[:40]},
		step{after: time.Second, data: pem[40:] + "after the key\r\n"},
	)
	red, err := NewRedactor()
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{aws, aws[:8], aws[8:], github, github[:10], github[10:], "hunter2", "MIIEpAIBAAKCAQEA", "qwertyuiop"}
	for _, f := range Formats {
		out, _ := exportAll(t, dir, f, red)
		text := out
		if f == Cast {
			_, evs := parseCast(t, out)
			text = outputOf(evs)
		}
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s: %q is still there:\n%s", f, s, text)
			}
		}
		for _, keep := range []string{"[REDACTED]", "export AWS_ACCESS_KEY_ID=", "password=", "keep", "after the key"} {
			if !strings.Contains(text, keep) {
				t.Errorf("%s: %q is gone:\n%s", f, keep, text)
			}
		}
		if f == Raw || f == Cast {
			// Only the secret's text went: its escape sequences stayed.
			for _, want := range []string{"token: \x1b[1m[REDACTED]\x1b[32m\x1b[0m done", "password=[REDACTED] \x1b[31mkeep"} {
				if !strings.Contains(text, want) {
					t.Errorf("%s: lacks %q:\n%q", f, want, text)
				}
			}
		}
	}
	// Without a Redactor, everything is there.
	if out, _ := exportAll(t, dir, Raw, nil); !strings.Contains(out, aws[8:]) || !strings.Contains(out, "hunter2") {
		t.Errorf("raw without redaction lost bytes: %q", out)
	}
}

// A redacted cast keeps each event's own time: the redaction is found on
// a first pass, so nothing waits for its line to end.
func TestRedactedCastKeepsTimes(t *testing.T) {
	dir, _ := writeLog(t, outlog.Options{},
		step{data: "$ "}, step{after: 2 * time.Second, data: "e"}, step{after: 2 * time.Second, data: "cho AKIAIOSF"},
		step{after: 2 * time.Second, data: "ODNN7EXAMPLE\r\n"})
	red, _ := NewRedactor()
	out, _ := exportAll(t, dir, Cast, red)
	_, evs := parseCast(t, out)
	var times []float64
	for _, e := range evs {
		times = append(times, e.t)
	}
	if len(evs) != 4 || times[1] != 2 || times[2] != 4 || times[3] != 6 || outputOf(evs) != "$ echo [REDACTED]\r\n" {
		t.Fatalf("events %+v", evs)
	}
}

func TestRedactorPatterns(t *testing.T) {
	red, err := NewRedactor(`internal-[0-9]{4}`, `id=(?P<secret>\w+)`)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n": "aws_secret_access_key = [REDACTED]\n",
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnop\n":                  "[REDACTED]\n",
		"glpat-abcdefghij0123456789\n":                                       "[REDACTED]\n",
		"xoxb-1234567890-abcdefghij\n":                                       "[REDACTED]\n",
		`{"password": "s3cr3t", "user": "bob"}` + "\n":                       `{"password": [REDACTED], "user": "bob"}` + "\n",
		"passwd: hunter2\n":                                                  "passwd: [REDACTED]\n",
		"Password: \r\n":                                                     "Password: \r\n",
		"ticket internal-1234 id=bob\n":                                      "ticket [REDACTED] id=[REDACTED]\n",
		"nothing to see\n":                                                   "nothing to see\n",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nabc\ndef\n-----END OPENSSH PRIVATE KEY-----\nok\n": "[REDACTED]\nok\n",
	} {
		if got := string(red.Redact([]byte(in))); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := NewRedactor("("); err == nil {
		t.Error("a bad pattern was accepted")
	}
}

// Grep finds lines by their text as shown: escape sequences left out,
// carriage returns overwriting, each with its offset and time, whether or
// not it is still on any screen.
func TestGrep(t *testing.T) {
	steps := []step{{data: "first \x1b[1mneedle\x1b[0m here\r\n"}}
	for i := range 5000 {
		steps = append(steps, step{data: fmt.Sprintf("filler %d\r\n", i)})
	}
	steps = append(steps,
		step{after: 3 * time.Second, data: "progress 10%\rprogress 50%\r\x1b[Kdone needle\r\n"},
		step{data: "\x1b[10;1Hrow ten needle\x1b[11;1Hrow eleven\r\n"},
		step{data: "split nee"}, step{data: "dle\r\n"},
	)
	dir, all := writeLog(t, outlog.Options{}, steps...)
	l := openRO(t, dir)
	var hits []Hit
	err := Grep(l, regexp.MustCompile(`needle`), l.First(), l.End(), func(h Hit) error {
		hits = append(hits, h)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"first needle here", "done needle", "row ten needle", "split needle"}
	if len(hits) != len(want) {
		t.Fatalf("hits %+v", hits)
	}
	for i, h := range hits {
		if h.Line != want[i] {
			t.Errorf("hit %d: %q, want %q", i, h.Line, want[i])
		}
	}
	// Each hit is where its match was drawn (TestGrepTimesTheMatch).
	if off := uint64(bytes.Index(all, []byte("needle"))); hits[0].Offset != off || hits[0].End != off+6 || !hits[0].Time.Equal(t0) {
		t.Errorf("first hit at [%d, %d) %v, want %d", hits[0].Offset, hits[0].End, hits[0].Time, off)
	}
	if off := uint64(bytes.Index(all, []byte("done needle")) + 5); hits[1].Offset != off || !hits[1].Time.Equal(t0.Add(3*time.Second)) {
		t.Errorf("second hit at %d %v, want %d", hits[1].Offset, hits[1].Time, off)
	}
	// Each is shown at the end of the chunk its match's last byte came in:
	// a terminal never showed "first needle" without " here".
	for i, chunk := range []string{"first \x1b[1mneedle\x1b[0m here\r\n", "progress 10%\rprogress 50%\r\x1b[Kdone needle\r\n", "\x1b[10;1Hrow ten needle\x1b[11;1Hrow eleven\r\n", "dle\r\n"} {
		if end := uint64(bytes.LastIndex(all, []byte(chunk)) + len(chunk)); hits[i].Shown != end {
			t.Errorf("hit %d (%q) shown at %d, want %d, the end of its chunk %q (its match ends at %d)", i, hits[i].Line, hits[i].Shown, end, chunk, hits[i].End)
		}
	}
	// A full-screen program's rows are lines; -i is the caller's (?i).
	n := 0
	Grep(l, regexp.MustCompile(`(?i)^ROW`), 0, l.End(), func(h Hit) error { n++; return nil })
	if n != 2 {
		t.Errorf("%d rows found, want 2", n)
	}
	stop := errors.New("stop")
	if err := Grep(l, regexp.MustCompile(`filler`), 0, l.End(), func(Hit) error { return stop }); err != stop {
		t.Errorf("Grep = %v, want fn's error", err)
	}
}

func TestParseBound(t *testing.T) {
	now := t0.Add(time.Hour)
	for in, want := range map[string]Bound{
		"1234":                 {Offset: 1234},
		"0":                    {},
		"2025-06-01T09:45:00Z": {Time: t0.Add(15 * time.Minute), IsTime: true},
		"-10m":                 {Time: now.Add(-10 * time.Minute), IsTime: true},
		"90s":                  {Time: now.Add(-90 * time.Second), IsTime: true},
	} {
		got, err := ParseBound(in, now)
		if err != nil || got.Offset != want.Offset || got.IsTime != want.IsTime || !got.Time.Equal(want.Time) {
			t.Errorf("ParseBound(%q) = %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "12ab", "+5m", "99999999999999999999999"} {
		if _, err := ParseBound(bad, now); err == nil {
			t.Errorf("ParseBound(%q) succeeded", bad)
		}
	}
	if _, err := ParseFormat("pdf"); err == nil || !strings.Contains(err.Error(), "cast, txt, html, raw") {
		t.Errorf("ParseFormat(pdf) = %v", err)
	}
}

// FuzzCast: whatever bytes a session printed, however they were chunked,
// the recording is valid JSON lines and its data is those bytes decoded.
func FuzzCast(f *testing.F) {
	f.Add([]byte("hello\r\n\x1b[31mred\xe2\x82\xac\xff"), uint8(3))
	f.Add([]byte("\xf0\x9f\x98\x80\xf0\x9f"), uint8(1))
	f.Add([]byte{0, 0x7f, '"', '\\', 0xc3}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		var steps []step
		rest := data
		for i := 0; len(rest) > 0; i++ {
			n := min(len(rest), 1+int(split)+i%5)
			steps = append(steps, step{after: time.Duration(i%3) * 400 * time.Millisecond, data: string(rest[:n]), mark: i%7 == 3})
			rest = rest[n:]
		}
		dir, all := writeLog(t, outlog.Options{Sync: outlog.SyncNever}, steps...)
		out, _ := exportAll(t, dir, Cast, nil)
		_, evs := parseCast(t, out)
		if got := outputOf(evs); got != decoded(all) {
			t.Fatalf("cast data %q, want %q", got, decoded(all))
		}
	})
}

// seqBytes is the bytes of p that belong to escape sequences.
func seqBytes(p []byte) []byte {
	var s vtscan.Scanner
	var out []byte
	for _, b := range p {
		if s.Step(b) != vtscan.Text {
			out = append(out, b)
		}
	}
	return out
}

// FuzzRedact: whatever the output and however it was chunked, redaction
// finds the same secrets, and leaves every escape sequence as it was.
func FuzzRedact(f *testing.F) {
	f.Add([]byte("token=\x1b[1mabc\x1b[0m AKIAIOSFODNN7EXAMPLE\r\n"), uint8(5))
	f.Add([]byte("-----BEGIN RSA PRIVATE KEY-----\r\n\x1b[1\x18x\r\n-----END RSA PRIVATE KEY-----\n"), uint8(3))
	f.Add([]byte("password: \x1b]0;title\x07hunter2\x1b[31"), uint8(1))
	f.Add([]byte("AKIAX\bIOSFODNN7EXAMPLE xx\b\x1b[K\x1b[3Dy\x1b[2P\x1b[9999999C!\r\n"), uint8(2))
	f.Add([]byte("\b\b\x1b[D\x1b[Kx\x1b[1\nDx\x1b[P\ttoken=a\bb"), uint8(0))
	red, err := NewRedactor(`x+`)
	if err != nil {
		f.Fatal(err)
	}
	// A key drawn with a correction, on lines of its own (CAN ends
	// whatever sequence the data left open), is hidden wherever it lands.
	const drawnKey = "\x18\nAKIAIOSF\x1b[1mQ\b \bODNN7\x1b[0mEXAMPLZ\x1b[D\x1b[KE\n"
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		whole := red.Redact(data)
		var chunked []byte
		s := red.stream(func(_ uint64, line []byte, edits []edit) error {
			chunked = applyEdits(chunked, line, edits)
			return nil
		})
		off := uint64(0)
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1+int(split))
			s.write(off, rest[:n])
			off += uint64(n)
			rest = rest[n:]
		}
		s.flush()
		if !bytes.Equal(chunked, whole) {
			t.Fatalf("chunked by %d: %q; whole: %q", 1+int(split), chunked, whole)
		}
		if a, b := seqBytes(data), seqBytes(whole); !bytes.Equal(a, b) {
			t.Fatalf("escape sequences changed: %q -> %q", a, b)
		}
		at := int(split) % (len(data) + 1)
		planted := append(append(append([]byte{}, data[:at]...), drawnKey...), data[at:]...)
		out := red.Redact(planted)
		for _, frag := range []string{"AKIA", "IOSF", "ODNN7", "EXAMPL"} {
			// The data may hold the same letters, and keep them.
			if n, m := bytes.Count(out, []byte(frag)), bytes.Count(data, []byte(frag)); n > m {
				t.Fatalf("the drawn key planted at %d shows %q: %q", at, frag, out)
			}
		}
	})
}

// More history than txt and html keep: the oldest lines are left out,
// and a line at the top says how many and why. A retention gap before
// them, scrolled off with them, is named above that line, not glued to
// the end. A cast, which has no history limit, plays every line.
func TestHistoryCutMarked(t *testing.T) {
	var steps []step
	for i := range 2000 {
		steps = append(steps, step{after: 10 * time.Millisecond, data: fmt.Sprintf("line %04d %s\r\n", i, strings.Repeat("x", 40))})
	}
	dir, _ := writeLog(t, outlog.Options{SegmentSize: 8 << 10, Retention: 40 << 10}, steps...)
	l := openRO(t, dir)
	if l.First() == 0 {
		t.Fatal("retention dropped nothing")
	}
	export := func(f Format, max int) (string, Result) {
		t.Helper()
		var out bytes.Buffer
		res, err := Export(&out, l, Options{Format: f, From: 0, To: l.End(), MaxLines: max})
		if err != nil {
			t.Fatalf("%s, max %d: %v", f, max, err)
		}
		return out.String(), res
	}
	gapLine := fmt.Sprintf("[termkeep: %d bytes no longer retained]", l.First())
	all, res := export(Text, -1) // no limit
	lines := strings.SplitAfter(all, "\n")
	lines = lines[:len(lines)-1] // after the last newline
	history := len(lines) - 24
	if res.LinesLeftOut != 0 || !strings.Contains(all, gapLine+"\n") || history < 300 {
		t.Fatalf("with no limit: %d lines left out, %d of history, gap line shown %v", res.LinesLeftOut, history, strings.Contains(all, gapLine))
	}
	if def, res := export(Text, 0); def != all || res.LinesLeftOut != 0 {
		t.Fatalf("the default limit (%d lines) cut %d lines of %d", DefaultMaxLines, res.LinesLeftOut, history)
	}
	for _, max := range []int{100, 1} {
		left := history - max
		want := gapLine + "\n" + CutLine(left, max) + "\n" + strings.Join(lines[left:], "")
		got, res := export(Text, max)
		if res.LinesLeftOut != left || got != want {
			t.Errorf("txt, max %d: %d lines left out (want %d):\n%.400s\nwant:\n%.400s", max, res.LinesLeftOut, left, got, want)
		}
		page, res := export(HTML, max)
		firstKept := strings.TrimRight(lines[left], "\n")
		gi, ci, ki := strings.Index(page, escapeHTML(gapLine)), strings.Index(page, escapeHTML(CutLine(left, max))), strings.Index(page, firstKept)
		if res.LinesLeftOut != left || gi < 0 || ci < gi || ki < ci || strings.Contains(page, strings.TrimRight(lines[left-1], "\n")+"\n") {
			t.Errorf("html, max %d: %d lines left out; the gap line at %d, the cut at %d, %q at %d:\n%.1000s", max, res.LinesLeftOut, gi, ci, firstKept, ki, page)
		}
	}
	cast, res := export(Cast, 100)
	if _, evs := parseCast(t, cast); res.LinesLeftOut != 0 || !strings.Contains(outputOf(evs), strings.TrimRight(lines[3], "\n")+"\r\n") {
		t.Errorf("the cast left out %d lines, or not every retained line is in it", res.LinesLeftOut)
	}
}

// 400 lines 100 ms apart, the wall clock set back 2 h or forward a year at
// line 200: the cast lasts 39.9 s, each line at its own time, with a marker
// where the clock was set.
func TestCastSteppedClock(t *testing.T) {
	for _, tc := range outlogtest.Steps {
		t.Run(tc.Name, func(t *testing.T) {
			s, l := outlogtest.OpenStepped(t, t0, tc.By)
			var b bytes.Buffer
			if _, err := Export(&b, l, Options{Format: Cast, From: l.First(), To: l.End()}); err != nil {
				t.Fatal(err)
			}
			hdr, evs := parseCast(t, b.String())
			if hdr["timestamp"] != float64(t0.Unix()) {
				t.Errorf("header timestamp %v, want %d", hdr["timestamp"], t0.Unix())
			}
			if last := evs[len(evs)-1].t; math.Abs(last-39.9) > 0.001 {
				t.Errorf("the cast lasts %.3fs, want 39.9s", last)
			}
			line, markers := 0, 0
			for _, e := range evs {
				switch e.typ {
				case "o":
					if want := float64(line) / 10; math.Abs(e.t-want) > 0.001 || e.data != fmt.Sprintf("line %03d\r\n", line) {
						t.Fatalf("event %+v, want line %d at %.1fs", e, line, want)
					}
					line++
				case "m":
					markers++
					if e.data != tc.Label || math.Abs(e.t-20) > 0.001 {
						t.Errorf("marker %+v, want %q at 20s", e, tc.Label)
					}
				}
			}
			if line != s.Lines || markers != 1 {
				t.Errorf("%d lines and %d markers, want %d and 1", line, markers, s.Lines)
			}
		})
	}
}

// A hit is the match itself: its offset and end are the bytes that drew
// the matching text, and its time is when the last of them was logged, not
// when its line began (a prompt printed minutes before a command was typed
// at it). Text drawn over, moved over or drawn in pieces counts where each
// character was drawn.
func TestGrepTimesTheMatch(t *testing.T) {
	typed := []step{{data: "user@host:~$ "}}
	for i, c := range "echo replay-marker-one" {
		after := 200 * time.Millisecond
		if i == 0 {
			after = 6 * time.Minute // the command is typed long after its prompt
		}
		typed = append(typed, step{after: after, data: string(c)})
	}
	typed = append(typed,
		step{after: time.Second, data: "\r\nreplay-marker-one\r\n"},
		// Drawn over: "needXX", back two, "le"; and a character of two bytes.
		step{after: time.Second, data: "needXX"}, step{after: time.Second, data: "\b\ble\r\n"},
		step{after: time.Second, data: "caf\xc3"}, step{after: time.Second, data: "\xa9 ok\r\n"},
		// Moved over with the cursor: the gap is padding, drawn by nothing.
		step{after: time.Second, data: "left\x1b[4Cright\r\n"},
	)
	dir, all := writeLog(t, outlog.Options{TimeEvery: 1}, typed...)
	l := openRO(t, dir)
	grep := func(pat string) []Hit {
		t.Helper()
		var hits []Hit
		if err := Grep(l, regexp.MustCompile(pat), l.First(), l.End(), func(h Hit) error {
			hits = append(hits, h)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return hits
	}
	at := func(s string, n int) uint64 { // offset of the nth (from 0) s in the log
		t.Helper()
		off := 0
		for range n + 1 {
			i := bytes.Index(all[off:], []byte(s))
			if i < 0 {
				t.Fatalf("%q is not in the log %d times", s, n+1)
			}
			off += i + len(s)
		}
		return uint64(off - len(s))
	}
	typedAt := t0.Add(6*time.Minute + 21*200*time.Millisecond)
	for _, c := range []struct {
		pat      string
		hit      int // which hit
		off, end uint64
		time     time.Time
		line     string
	}{
		{"replay-marker-one", 0, at("r", 1), at("e", 4) + 1, typedAt, "user@host:~$ echo replay-marker-one"},
		{"replay-marker-one", 1, at("replay-marker-one", 1), at("replay-marker-one", 1) + 17, typedAt.Add(time.Second), "replay-marker-one"},
		{"needle", 0, at("needXX", 0), at("\b\ble", 0) + 4, typedAt.Add(3 * time.Second), "needle"},
		{"café", 0, at("caf", 0), at("\xa9", 0) + 1, typedAt.Add(5 * time.Second), "café ok"},
		{"ft +ri", 0, at("left", 0) + 2, at("right", 0) + 2, typedAt.Add(6 * time.Second), "left    right"},
		{"^user@", 0, 0, 5, t0, "user@host:~$ echo replay-marker-one"},
	} {
		hits := grep(c.pat)
		if len(hits) <= c.hit {
			t.Errorf("%q: %d hits, want hit %d", c.pat, len(hits), c.hit)
			continue
		}
		h := hits[c.hit]
		if h.Line != c.line || h.Offset != c.off || h.End != c.end || !h.Time.Equal(c.time) {
			t.Errorf("%q hit %d: %q at [%d, %d) %v; want %q at [%d, %d) %v", c.pat, c.hit, h.Line, h.Offset, h.End, h.Time.Sub(t0),
				c.line, c.off, c.end, c.time.Sub(t0))
		}
	}
}
