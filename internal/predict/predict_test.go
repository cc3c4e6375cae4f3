package predict

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// term is a terminal of cols columns that plays the session's echo:
// printable characters, BS, CR, LF, CSI C/D/K/H. The page's test has its
// twin.
type term struct {
	cols     int
	lines    map[int][]string
	row, col int
}

func newTerm(cols int) *term { return &term{cols: cols, lines: map[int][]string{}} }

func (t *term) line(r int) []string {
	if t.lines[r] == nil {
		l := make([]string, t.cols)
		for i := range l {
			l[i] = " "
		}
		t.lines[r] = l
	}
	return t.lines[r]
}

var csi = regexp.MustCompile(`^\x1b\[(\d*)([A-Za-z])`)

func (t *term) write(s string) *term {
	for i := 0; i < len(s); {
		switch s[i] {
		case '\b':
			t.col = max(0, t.col-1)
		case '\r':
			t.col = 0
		case '\n':
			t.row++
		case 0x1b:
			m := csi.FindStringSubmatch(s[i:])
			n, err := strconv.Atoi(m[1])
			if err != nil {
				n = 1
			}
			switch m[2] {
			case "C":
				t.col = min(t.cols-1, t.col+n)
			case "D":
				t.col = max(0, t.col-n)
			case "K":
				l := t.line(t.row)
				for c := t.col; c < t.cols; c++ {
					l[c] = " "
				}
			case "H":
				t.row, t.col = 0, 0
			}
			i += len(m[0])
			continue
		default:
			r := []rune(s[i:])[0]
			t.line(t.row)[t.col] = string(r)
			t.col = min(t.cols-1, t.col+1)
			i += len(string(r))
			continue
		}
		i++
	}
	return t
}

func (t *term) Cursor() (int, int)   { return t.row, t.col }
func (t *term) Cols() int            { return t.cols }
func (t *term) Cell(r, c int) string { return t.line(r)[c] }
func (t *term) shown(p *Predictor, row int) string {
	l := slices.Clone(t.line(row))
	for _, c := range p.View().Cells {
		if c.Row == row {
			l[c.Col] = c.Char
		}
	}
	return strings.TrimRight(strings.Join(l, ""), " ")
}

// The corpus, as testdata/traces.json holds it (its "about" says how).
type corpus struct {
	Modes  map[string]jsonModes `json:"modes"`
	Traces []trace              `json:"traces"`
}

type jsonModes struct {
	AltScreen *bool           `json:"altScreen"`
	Mouse     *bool           `json:"mouse"`
	TermMode  json.RawMessage `json:"termMode"` // "null": unknown; empty: absent
	Shell     *string         `json:"shell"`
}

type trace struct {
	Name    string          `json:"name"`
	Setting string          `json:"setting"`
	RTT     json.RawMessage `json:"rtt"`
	Cols    int             `json:"cols"`
	Modes   json.RawMessage `json:"modes"`
	Screen  *string         `json:"screen"`
	Steps   []map[string]json.RawMessage
}

type expect struct {
	Shown       *string          `json:"shown"`
	Row         int              `json:"row"`
	Cells       *[][3]any        `json:"cells"`
	Cursor      *json.RawMessage `json:"cursor"`
	Stats       map[string]int   `json:"stats"`
	Deadline    *json.RawMessage `json:"deadline"`
	Corrections *[]float64       `json:"corrections"`
}

func loadCorpus(t testing.TB) corpus {
	b, err := os.ReadFile("testdata/traces.json")
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// modes resolves a trace's modes: a name from the corpus, or an object
// over the prompt's.
func (c corpus) modes(t *testing.T, raw json.RawMessage) Modes {
	base := c.Modes["prompt"]
	var name string
	if len(raw) == 0 {
		name = "prompt"
	} else if json.Unmarshal(raw, &name) != nil {
		name = ""
		var over jsonModes
		if err := json.Unmarshal(raw, &over); err != nil {
			t.Fatal(err)
		}
		if over.AltScreen != nil {
			base.AltScreen = over.AltScreen
		}
		if over.Mouse != nil {
			base.Mouse = over.Mouse
		}
		if len(over.TermMode) > 0 {
			base.TermMode = over.TermMode
		}
		if over.Shell != nil {
			base.Shell = over.Shell
		}
	}
	if name != "" {
		var ok bool
		if base, ok = c.Modes[name]; !ok {
			t.Fatalf("no modes named %q", name)
		}
	}
	var m Modes
	m.AltScreen, m.Mouse = *base.AltScreen, *base.Mouse
	if len(base.TermMode) > 0 && string(base.TermMode) != "null" {
		var tm struct{ Echo, Canonical bool }
		json.Unmarshal(base.TermMode, &tm)
		m.TermMode = &TermMode{tm.Echo, tm.Canonical}
	}
	m.Shell = map[string]Shell{"unknown": ShellUnknown, "prompt": ShellPrompt, "running": ShellRunning}[*base.Shell]
	return m
}

var epoch = time.Unix(1e9, 0)

func ms(v float64) time.Time { return epoch.Add(time.Duration(v * float64(time.Millisecond))) }

func sinceMs(t time.Time) float64 { return float64(t.Sub(epoch)) / float64(time.Millisecond) }

func num(t *testing.T, raw json.RawMessage) float64 {
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// play runs one trace, checking each expect step.
func (c corpus) play(t *testing.T, tr trace) {
	opts := Options{Setting: map[string]Setting{"": Auto, "auto": Auto, "always": Always, "off": Never}[tr.Setting]}
	p := New(opts)
	switch string(tr.RTT) {
	case "null":
	case "":
		p.SetRTT(150 * time.Millisecond)
	default:
		p.SetRTT(time.Duration(num(t, tr.RTT) * float64(time.Millisecond)))
	}
	p.SetModes(c.modes(t, tr.Modes))
	cols := tr.Cols
	if cols == 0 {
		cols = 40
	}
	scr := "$ "
	if tr.Screen != nil {
		scr = *tr.Screen
	}
	tm := newTerm(cols).write(scr)
	str := func(raw json.RawMessage) string {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i, s := range tr.Steps {
		at := fmt.Sprintf("step %d", i+1)
		switch {
		case s["key"] != nil:
			p.Key(str(s["key"]), ms(num(t, s["at"])), tm)
		case s["keys"] != nil:
			var keys []string
			json.Unmarshal(s["keys"], &keys)
			for j, k := range keys {
				p.Key(k, ms(num(t, s["at"])+float64(j)), tm)
			}
		case s["write"] != nil:
			tm.write(str(s["write"]))
		case s["out"] != nil:
			p.Screen(ms(num(t, s["at"])), tm.write(str(s["out"])))
		case s["tick"] != nil:
			p.Tick(ms(num(t, s["tick"])))
		case s["modes"] != nil:
			p.SetModes(c.modes(t, s["modes"]))
		case s["rtt"] != nil:
			p.SetRTT(time.Duration(num(t, s["rtt"]) * float64(time.Millisecond)))
		case s["prompt"] != nil:
			p.Prompt()
		case s["expect"] != nil:
			var e expect
			if err := json.Unmarshal(s["expect"], &e); err != nil {
				t.Fatal(err)
			}
			c.check(t, at, p, tm, e)
		default:
			t.Fatalf("%s: an unknown step %v", at, s)
		}
	}
}

func (c corpus) check(t *testing.T, at string, p *Predictor, tm *term, e expect) {
	t.Helper()
	v := p.View()
	if e.Shown != nil {
		if got := tm.shown(p, e.Row); got != *e.Shown {
			t.Errorf("%s: shown %q, want %q", at, got, *e.Shown)
		}
	}
	if e.Cells != nil {
		var got [][3]any
		for _, c := range v.Cells {
			got = append(got, [3]any{float64(c.Row), float64(c.Col), c.Char})
		}
		slices.SortFunc(got, func(a, b [3]any) int {
			if a[0] != b[0] {
				return int(a[0].(float64) - b[0].(float64))
			}
			return int(a[1].(float64) - b[1].(float64))
		})
		if len(got) != 0 || len(*e.Cells) != 0 {
			if !reflect.DeepEqual(got, *e.Cells) {
				t.Errorf("%s: cells %v, want %v", at, got, *e.Cells)
			}
		}
	}
	if e.Cursor != nil {
		var want []int
		json.Unmarshal(*e.Cursor, &want)
		var got []int
		if v.Cursor {
			got = []int{v.CursorRow, v.CursorCol}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: cursor %v, want %v", at, got, want)
		}
	}
	stats := map[string]int{"keys": p.Stats.Keys, "shown": p.Stats.Shown, "confirmed": p.Stats.Confirmed, "wrong": p.Stats.Wrong, "late": p.Stats.Late}
	for k, n := range e.Stats {
		if stats[k] != n {
			t.Errorf("%s: stats.%s %d, want %d", at, k, stats[k], n)
		}
	}
	if e.Deadline != nil {
		d, ok := p.Deadline()
		got := math.NaN()
		if ok {
			got = sinceMs(d)
		}
		if string(*e.Deadline) == "null" {
			if ok {
				t.Errorf("%s: deadline %v, want none", at, got)
			}
		} else if want := num(t, *e.Deadline); got != want {
			t.Errorf("%s: deadline %v, want %v", at, got, want)
		}
	}
	if e.Corrections != nil {
		var got []float64
		for _, d := range p.Corrections {
			got = append(got, float64(d)/float64(time.Millisecond))
		}
		if len(got) != 0 || len(*e.Corrections) != 0 {
			if !slices.Equal(got, *e.Corrections) {
				t.Errorf("%s: corrections %v, want %v", at, got, *e.Corrections)
			}
		}
	}
}

// TestTraces plays the corpus the page's predictor plays too
// (web/test/unit/predict.test.mjs).
func TestTraces(t *testing.T) {
	c := loadCorpus(t)
	if len(c.Traces) < 40 {
		t.Fatalf("%d traces: the corpus was not read whole", len(c.Traces))
	}
	for _, tr := range c.Traces {
		t.Run(tr.Name, func(t *testing.T) { c.play(t, tr) })
	}
}
