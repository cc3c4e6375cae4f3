package sizepolicy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The policies as traces. Each script drives what the session host does
// (host.go: a viewer arrives, types, resizes or leaves, and the host asks
// the holder for the size Decide gives when Need says so); after "->" is
// the decision: the size and its owner, "none" when no viewer has a say,
// and "resize" when the holder is asked for it.
//
//	policy latest|smallest
//	size COLSxROWS                 the session's size at the start
//	attach ID rw|ro COLSxROWS -> …  a viewer arrives (0x0: size unknown)
//	type ID -> …                    it types
//	resize ID COLSxROWS -> …        its terminal is resized
//	leave ID -> …
//	confirm                         the holder confirms the size last asked
//	tick DURATION
func TestPolicyTraces(t *testing.T) {
	for _, c := range []struct{ name, script string }{
		{"latest follows the writable viewer that last typed or resized", `
			size 80x24
			attach 1 rw 100x30 -> 100x30 owner=1 resize
			confirm
			attach 2 rw 120x40 -> 120x40 owner=2 resize
			confirm
			tick 1s
			type 1 -> 100x30 owner=1 resize
			confirm
			tick 1s
			resize 2 90x20 -> 90x20 owner=2 resize
			confirm
			tick 1s
			type 2 -> 90x20 owner=2`},
		{"a read-only viewer never counts, whatever it does", `
			size 80x24
			attach 1 ro 200x60 -> none
			type 1 -> none
			resize 1 10x5 -> none
			attach 2 rw 100x30 -> 100x30 owner=2 resize
			confirm
			tick 1s
			resize 1 50x10 -> 100x30 owner=2
			leave 2 -> none`},
		{"a viewer of unknown size counts once it has one", `
			size 80x24
			attach 1 rw 100x30 -> 100x30 owner=1 resize
			confirm
			tick 1s
			attach 2 rw 0x0 -> 100x30 owner=1
			tick 1s
			type 2 -> 100x30 owner=1
			tick 1s
			resize 2 70x20 -> 70x20 owner=2 resize`},
		{"the size owner leaves: the most recently active writable viewer left takes over", `
			size 80x24
			attach 1 rw 100x30 -> 100x30 owner=1 resize
			confirm
			tick 1s
			attach 2 rw 120x40 -> 120x40 owner=2 resize
			confirm
			tick 1s
			attach 3 rw 90x25 -> 90x25 owner=3 resize
			confirm
			tick 1s
			type 1 -> 100x30 owner=1 resize
			confirm
			leave 1 -> 90x25 owner=3 resize
			confirm
			leave 3 -> 120x40 owner=2 resize
			confirm
			leave 2 -> none`},
		{"the last writable viewer leaves: the session keeps its size", `
			size 80x24
			attach 1 ro 50x10 -> none
			attach 2 rw 100x30 -> 100x30 owner=2 resize
			confirm
			leave 2 -> none
			attach 3 rw 100x30 -> 100x30 owner=3`},
		{"sizes beyond the limits count as unknown", `
			size 80x24
			attach 1 rw 1001x30 -> none
			attach 2 rw 100x0 -> none
			attach 3 rw 0x30 -> none
			attach 4 rw 65535x65535 -> none
			attach 5 rw 1000x1000 -> 1000x1000 owner=5 resize
			confirm
			tick 1s
			type 1 -> 1000x1000 owner=5
			resize 1 1x1 -> 1x1 owner=1 resize`},
		{"a resize storm: every change is asked for, none twice in a row", `
			size 80x24
			attach 1 rw 80x24 -> 80x24 owner=1
			resize 1 100x30 -> 100x30 owner=1 resize
			resize 1 80x24 -> 80x24 owner=1 resize
			resize 1 100x30 -> 100x30 owner=1 resize
			resize 1 100x30 -> 100x30 owner=1
			confirm
			resize 1 80x24 -> 80x24 owner=1 resize
			resize 1 100x30 -> 100x30 owner=1 resize
			confirm
			confirm
			resize 1 100x30 -> 100x30 owner=1`},
		{"a resize storm from two viewers at once: the last to resize wins", `
			size 80x24
			attach 1 rw 80x24 -> 80x24 owner=1
			attach 2 rw 80x24 -> 80x24 owner=2
			tick 1ms
			resize 1 81x24 -> 81x24 owner=1 resize
			tick 1ms
			resize 2 82x24 -> 82x24 owner=2 resize
			tick 1ms
			resize 1 83x24 -> 83x24 owner=1 resize
			tick 1ms
			resize 2 84x24 -> 84x24 owner=2 resize
			confirm
			leave 2 -> 83x24 owner=1 resize`},
		{"smallest fits every writable viewer, columns and rows apart", `
			policy smallest
			size 80x24
			attach 1 rw 100x50 -> 100x50 resize
			confirm
			attach 2 rw 120x30 -> 100x30 resize
			confirm
			attach 3 ro 20x10 -> 100x30
			attach 4 rw 0x0 -> 100x30
			type 1 -> 100x30
			resize 2 90x60 -> 90x50 resize
			confirm
			leave 1 -> 90x60 resize
			confirm
			leave 2 -> none
			leave 4 -> none`},
	} {
		t.Run(c.name, func(t *testing.T) { runPolicyScript(t, c.script) })
	}
}

func runPolicyScript(t *testing.T, script string) {
	t.Helper()
	p := Latest
	var viewers []Viewer
	var has, asked Size
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	find := func(id int) int {
		i := slices.IndexFunc(viewers, func(v Viewer) bool { return v.ID == id })
		if i < 0 {
			t.Fatalf("no viewer %d", id)
		}
		return i
	}
	for n, line := range strings.Split(strings.TrimSpace(script), "\n") {
		line = strings.TrimSpace(line)
		step, want, decides := strings.Cut(line, " -> ")
		f := strings.Fields(step)
		num := func(i int) int {
			v, err := strconv.Atoi(f[i])
			if err != nil {
				t.Fatalf("line %d: %v", n+1, err)
			}
			return v
		}
		size := func(i int) Size {
			var s Size
			if _, err := fmt.Sscanf(f[i], "%dx%d", &s.Cols, &s.Rows); err != nil {
				t.Fatalf("line %d: size %q: %v", n+1, f[i], err)
			}
			return s
		}
		switch f[0] {
		case "policy":
			var err error
			if p, err = Parse(f[1]); err != nil {
				t.Fatalf("line %d: %v", n+1, err)
			}
		case "size":
			has = size(1)
		case "confirm":
			if asked != (Size{}) {
				has = asked
			}
		case "tick":
			d, err := time.ParseDuration(f[1])
			if err != nil {
				t.Fatalf("line %d: %v", n+1, err)
			}
			now = now.Add(d)
		case "attach":
			s := size(3)
			v := Viewer{ID: num(1), Writable: f[2] == "rw", Cols: s.Cols, Rows: s.Rows}
			// The host counts a writable viewer's arrival as activity
			// when it comes with a size (ServeViewer).
			if v.Writable && s.Cols > 0 && s.Rows > 0 {
				v.Active = now
			}
			viewers = append(viewers, v)
		case "type":
			viewers[find(num(1))].Active = now
		case "resize":
			i, s := find(num(1)), size(2)
			viewers[i].Cols, viewers[i].Rows, viewers[i].Active = s.Cols, s.Rows, now
		case "leave":
			viewers = slices.Delete(viewers, find(num(1)), find(num(1))+1)
		default:
			t.Fatalf("line %d: no step %q", n+1, f[0])
		}
		if !decides {
			continue
		}
		got, owner := Decide(p, viewers)
		// The order viewers come in (a map's, in the host) never matters.
		rev := slices.Clone(viewers)
		slices.Reverse(rev)
		if g2, o2 := Decide(p, rev); g2 != got || o2 != owner {
			t.Errorf("line %d: in reverse order %v owner %d, in order %v owner %d", n+1, g2, o2, got, owner)
		}
		out := "none"
		if got != (Size{}) {
			out = got.String()
		}
		if owner != 0 {
			out += " owner=" + strconv.Itoa(owner)
		}
		if Need(got, asked, has) {
			asked = got
			out += " resize"
		}
		if out != want {
			t.Errorf("line %d: %s -> %s, want %s", n+1, step, out, want)
		}
	}
}

// Two viewers equally recent: the later to arrive wins, whichever order
// they are listed in; the others' order never matters either.
func TestLatestTie(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	vs := []Viewer{
		{ID: 3, Writable: true, Cols: 90, Rows: 30, Active: at},
		{ID: 7, Writable: true, Cols: 100, Rows: 40, Active: at},
		{ID: 9, Writable: false, Cols: 120, Rows: 50, Active: at.Add(time.Hour)},
		{ID: 2, Writable: true, Cols: 80, Rows: 24, Active: at.Add(-time.Second)},
	}
	for range len(vs) {
		vs = append(vs[1:], vs[0])
		if size, owner := Decide(Latest, vs); owner != 7 || size != (Size{100, 40}) {
			t.Fatalf("%v: %v owner %d, want 100x40 owner 7", vs, size, owner)
		}
	}
	// Nobody has been active (a session that had ended when they came):
	// still the later to arrive.
	idle := []Viewer{{ID: 4, Writable: true, Cols: 90, Rows: 30}, {ID: 5, Writable: true, Cols: 91, Rows: 31}}
	if size, owner := Decide(Latest, idle); owner != 5 || size != (Size{91, 31}) {
		t.Fatalf("never-active viewers: %v owner %d, want 91x31 owner 5", size, owner)
	}
	if size, owner := Decide(Smallest, vs); owner != 0 || size != (Size{80, 24}) {
		t.Fatalf("smallest: %v owner %d, want 80x24 and no owner", size, owner)
	}
	if size, owner := Decide(Latest, nil); owner != 0 || size != (Size{}) {
		t.Fatalf("no viewers: %v owner %d", size, owner)
	}
}

func TestNeed(t *testing.T) {
	for _, c := range []struct {
		want, asked, has Size
		need             bool
	}{
		{Size{80, 24}, Size{}, Size{80, 24}, false},
		{Size{100, 30}, Size{}, Size{80, 24}, true},
		{Size{80, 24}, Size{100, 30}, Size{80, 24}, true}, // back to the size it has, while 100x30 is on its way
		{Size{100, 30}, Size{100, 30}, Size{80, 24}, false},
		{Size{}, Size{}, Size{80, 24}, false},
		{Size{80, 0}, Size{}, Size{80, 24}, false},
		{Size{0, 24}, Size{}, Size{80, 24}, false},
		{Size{80, 24}, Size{}, Size{}, true},
	} {
		if got := Need(c.want, c.asked, c.has); got != c.need {
			t.Errorf("Need(%v, asked %v, has %v) = %v, want %v", c.want, c.asked, c.has, got, c.need)
		}
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]Policy{"": Latest, "latest": Latest, "smallest": Smallest} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"Latest", "largest", "fixed", " latest", "smallest\x00"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "is not latest or smallest") {
			t.Errorf("Parse(%q): %v, want an error naming the policies", bad, err)
		}
	}
}
