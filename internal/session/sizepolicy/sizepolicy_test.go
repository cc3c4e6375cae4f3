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
// (host.go, sizing.go: a viewer arrives, types, reports its size, fits or
// leaves, and the host asks the holder for the size Decide gives when Need
// says so); after "->" is the decision: the size and its owner, "none"
// when no viewer has a say, and "resize" when the holder is asked for it.
//
//	policy latest|smallest|largest|fixed   (live: the next step decides anew)
//	size COLSxROWS                 the session's size at the start
//	fixed COLSxROWS                the size Fixed keeps (termkeep resize)
//	attach ID MODE COLSxROWS [fit] -> …  a viewer arrives (0x0: size unknown);
//	                               MODE rw, ro (read-only), ign (ignore-size),
//	                               old (a legacy viewer: its reports take the size)
//	type ID -> …                    it types
//	report ID COLSxROWS -> …        it reports its window's size (a resize frame)
//	fit ID COLSxROWS -> …           it asks to take the size (a fit frame)
//	leave ID -> …
//	confirm                         the holder confirms the size last asked
//	tick DURATION
func TestPolicyTraces(t *testing.T) {
	for _, c := range []struct{ name, script string }{
		{"latest follows the writable viewer that last typed or fit", `
			size 80x24
			attach 1 rw 100x30 fit -> 100x30 owner=1 resize
			confirm
			attach 2 rw 120x40 fit -> 120x40 owner=2 resize
			confirm
			tick 1s
			type 1 -> 100x30 owner=1 resize
			confirm
			tick 1s
			fit 2 90x20 -> 90x20 owner=2 resize
			confirm
			tick 1s
			type 2 -> 90x20 owner=2`},
		{"arriving and reporting take nothing: a phone opens, rotates, opens its keyboard", `
			size 149x41
			attach 1 rw 149x41 fit -> 149x41 owner=1
			tick 1s
			attach 2 rw 44x20 -> 149x41 owner=1
			report 2 90x20 -> 149x41 owner=1
			report 2 44x12 -> 149x41 owner=1
			tick 1s
			type 2 -> 44x12 owner=2 resize
			confirm
			tick 1s
			report 2 90x20 -> 44x12 owner=2
			tick 1s
			type 1 -> 149x41 owner=1 resize`},
		{"nobody took the size: the session keeps it", `
			size 80x24
			attach 1 rw 100x30 -> none
			attach 2 rw 120x40 -> none
			report 1 90x30 -> none
			leave 2 -> none`},
		{"a read-only viewer never counts, whatever it does", `
			size 80x24
			attach 1 ro 200x60 fit -> none
			type 1 -> none
			report 1 10x5 -> none
			fit 1 10x5 -> none
			attach 2 rw 100x30 fit -> 100x30 owner=2 resize
			confirm
			tick 1s
			fit 1 50x10 -> 100x30 owner=2
			leave 2 -> none
			policy smallest
			report 1 20x10 -> none
			policy largest
			fit 1 300x100 -> none`},
		{"ignore-size watches and never counts, under any policy", `
			size 80x24
			attach 1 ign 50x10 fit -> none
			type 1 -> none
			attach 2 rw 100x30 -> none
			policy smallest
			type 1 -> 100x30 resize
			confirm
			policy largest
			fit 1 300x100 -> 100x30
			policy latest
			fit 1 300x100 -> none`},
		{"a viewer of unknown size counts once it has one", `
			size 80x24
			attach 1 rw 100x30 fit -> 100x30 owner=1 resize
			confirm
			tick 1s
			attach 2 rw 0x0 fit -> 100x30 owner=1
			tick 1s
			type 2 -> 100x30 owner=1
			tick 1s
			report 2 70x20 -> 100x30 owner=1
			tick 1s
			type 2 -> 70x20 owner=2 resize`},
		{"the size owner leaves: the one that took it most recently before takes over", `
			size 80x24
			attach 1 rw 100x30 fit -> 100x30 owner=1 resize
			confirm
			tick 1s
			attach 2 rw 120x40 fit -> 120x40 owner=2 resize
			confirm
			tick 1s
			attach 3 rw 90x25 fit -> 90x25 owner=3 resize
			confirm
			tick 1s
			type 1 -> 100x30 owner=1 resize
			confirm
			leave 1 -> 90x25 owner=3 resize
			confirm
			leave 3 -> 120x40 owner=2 resize
			confirm
			leave 2 -> none`},
		{"the owner's size is the one it took, not the one it reports since", `
			size 80x24
			attach 1 rw 100x30 fit -> 100x30 owner=1 resize
			confirm
			report 1 60x20 -> 100x30 owner=1
			attach 2 rw 120x40 -> 100x30 owner=1
			tick 1s
			leave 1 -> none`},
		{"the last writable viewer leaves: the session keeps its size", `
			size 80x24
			attach 1 ro 50x10 -> none
			attach 2 rw 100x30 fit -> 100x30 owner=2 resize
			confirm
			leave 2 -> none
			attach 3 rw 100x30 fit -> 100x30 owner=3`},
		{"sizes beyond the limits count as unknown", `
			size 80x24
			attach 1 rw 1001x30 fit -> none
			attach 2 rw 100x0 fit -> none
			attach 3 rw 0x30 fit -> none
			attach 4 rw 65535x65535 fit -> none
			attach 5 rw 1000x1000 fit -> 1000x1000 owner=5 resize
			confirm
			tick 1s
			type 1 -> 1000x1000 owner=5
			fit 1 1x1 -> 1x1 owner=1 resize
			policy largest
			report 4 1001x1001 -> 1000x1000 resize`},
		{"a legacy viewer takes the size by its reports, as before", `
			size 80x24
			attach 1 old 100x30 -> 100x30 owner=1 resize
			confirm
			tick 1s
			attach 2 rw 120x40 fit -> 120x40 owner=2 resize
			confirm
			tick 1s
			report 1 90x30 -> 90x30 owner=1 resize`},
		{"a fit storm: every change is asked for, none twice in a row", `
			size 80x24
			attach 1 rw 80x24 fit -> 80x24 owner=1
			fit 1 100x30 -> 100x30 owner=1 resize
			fit 1 80x24 -> 80x24 owner=1 resize
			fit 1 100x30 -> 100x30 owner=1 resize
			fit 1 100x30 -> 100x30 owner=1
			confirm
			fit 1 80x24 -> 80x24 owner=1 resize
			fit 1 100x30 -> 100x30 owner=1 resize
			confirm
			confirm
			fit 1 100x30 -> 100x30 owner=1`},
		{"a fit storm from two viewers at once: the last to fit wins", `
			size 80x24
			attach 1 rw 80x24 fit -> 80x24 owner=1
			attach 2 rw 80x24 fit -> 80x24 owner=2
			tick 1ms
			fit 1 81x24 -> 81x24 owner=1 resize
			tick 1ms
			fit 2 82x24 -> 82x24 owner=2 resize
			tick 1ms
			fit 1 83x24 -> 83x24 owner=1 resize
			tick 1ms
			fit 2 84x24 -> 84x24 owner=2 resize
			confirm
			leave 2 -> 83x24 owner=1 resize`},
		{"smallest fits every writable viewer, columns and rows apart, by their reports", `
			policy smallest
			size 80x24
			attach 1 rw 100x50 -> 100x50 resize
			confirm
			attach 2 rw 120x30 -> 100x30 resize
			confirm
			attach 3 ro 20x10 -> 100x30
			attach 4 rw 0x0 -> 100x30
			type 1 -> 100x30
			report 2 90x60 -> 90x50 resize
			confirm
			leave 1 -> 90x60 resize
			confirm
			leave 2 -> none
			leave 4 -> none`},
		{"largest fills the largest writable viewer, columns and rows apart", `
			policy largest
			size 80x24
			attach 1 rw 100x50 -> 100x50 resize
			confirm
			attach 2 rw 120x30 -> 120x50 resize
			confirm
			attach 3 ro 300x100 -> 120x50
			report 1 60x20 -> 120x30 resize
			confirm
			leave 2 -> 60x20 resize`},
		{"fixed keeps its size whatever viewers do; none set yet keeps the session's", `
			policy fixed
			size 80x24
			attach 1 rw 100x30 fit -> none
			type 1 -> none
			fixed 132x43 -> 132x43 resize
			confirm
			fit 1 50x10 -> 132x43
			report 1 60x10 -> 132x43
			fixed 0x0 -> none
			fixed 1001x5 -> none`},
		{"switching policy live decides at once", `
			size 80x24
			attach 1 rw 100x30 fit -> 100x30 owner=1 resize
			confirm
			attach 2 rw 60x40 -> 100x30 owner=1
			policy smallest -> 60x30 resize
			confirm
			policy largest -> 100x40 resize
			confirm
			policy fixed -> none
			fixed 70x20 -> 70x20 resize
			confirm
			policy latest -> 100x30 owner=1 resize
			confirm
			policy bogus
			type 2 -> 60x40 owner=2 resize`},
	} {
		t.Run(c.name, func(t *testing.T) { runPolicyScript(t, c.script) })
	}
}

func runPolicyScript(t *testing.T, script string) {
	t.Helper()
	p := Latest
	var viewers []Viewer
	var has, asked, fixed Size
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
			q, err := Parse(f[1])
			if err != nil {
				// A bad name changes nothing (the API refuses it).
				if f[1] != "bogus" {
					t.Fatalf("line %d: %v", n+1, err)
				}
				break
			}
			p = q
		case "size":
			has = size(1)
		case "fixed":
			fixed = size(1)
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
			v := Viewer{ID: num(1), Writable: f[2] != "ro", IgnoreSize: f[2] == "ign", Legacy: f[2] == "old"}
			// The host applies a hello's size as a fit or a report
			// (ServeViewer).
			ev := Report
			if len(f) > 4 && f[4] == "fit" {
				ev = Fit
			}
			v.Apply(ev, s.Cols, s.Rows, now)
			viewers = append(viewers, v)
		case "type":
			viewers[find(num(1))].Apply(Type, 0, 0, now)
		case "report", "fit":
			ev := Report
			if f[0] == "fit" {
				ev = Fit
			}
			s := size(2)
			viewers[find(num(1))].Apply(ev, s.Cols, s.Rows, now)
		case "leave":
			viewers = slices.Delete(viewers, find(num(1)), find(num(1))+1)
		default:
			t.Fatalf("line %d: no step %q", n+1, f[0])
		}
		if !decides {
			continue
		}
		got, owner := Decide(p, fixed, viewers)
		// The order viewers come in (a map's, in the host) never matters.
		rev := slices.Clone(viewers)
		slices.Reverse(rev)
		if g2, o2 := Decide(p, fixed, rev); g2 != got || o2 != owner {
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
		{ID: 3, Writable: true, Cols: 90, Rows: 30, Active: at, Taken: Size{90, 30}},
		{ID: 7, Writable: true, Cols: 100, Rows: 40, Active: at, Taken: Size{100, 40}},
		{ID: 9, Writable: false, Cols: 120, Rows: 50, Active: at.Add(time.Hour), Taken: Size{120, 50}},
		{ID: 2, Writable: true, Cols: 80, Rows: 24, Active: at.Add(-time.Second), Taken: Size{80, 24}},
	}
	for range len(vs) {
		vs = append(vs[1:], vs[0])
		if size, owner := Decide(Latest, Size{}, vs); owner != 7 || size != (Size{100, 40}) {
			t.Fatalf("%v: %v owner %d, want 100x40 owner 7", vs, size, owner)
		}
	}
	// Nobody took the size: nobody owns it, whoever came last.
	idle := []Viewer{{ID: 4, Writable: true, Cols: 90, Rows: 30}, {ID: 5, Writable: true, Cols: 91, Rows: 31}}
	if size, owner := Decide(Latest, Size{}, idle); owner != 0 || size != (Size{}) {
		t.Fatalf("viewers that never took the size: %v owner %d, want none", size, owner)
	}
	if size, owner := Decide(Smallest, Size{}, vs); owner != 0 || size != (Size{80, 24}) {
		t.Fatalf("smallest: %v owner %d, want 80x24 and no owner", size, owner)
	}
	if size, owner := Decide(Largest, Size{}, vs); owner != 0 || size != (Size{100, 40}) {
		t.Fatalf("largest: %v owner %d, want 100x40 and no owner", size, owner)
	}
	// A viewer whose taken size is not one a session can have (a hostile
	// caller's) never owns it.
	bad := []Viewer{{ID: 1, Writable: true, Cols: 90, Rows: 30, Active: at, Taken: Size{0, 30}}}
	if size, owner := Decide(Latest, Size{}, bad); owner != 0 || size != (Size{}) {
		t.Fatalf("an invalid taken size: %v owner %d, want none", size, owner)
	}
	if size, owner := Decide(Latest, Size{}, nil); owner != 0 || size != (Size{}) {
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
	for in, want := range map[string]Policy{"": Latest, "latest": Latest, "smallest": Smallest, "largest": Largest, "fixed": Fixed} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"Latest", "biggest", "manual", " latest", "smallest\x00", "fixed "} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "is not latest, smallest, largest or fixed") {
			t.Errorf("Parse(%q): %v, want an error naming the policies", bad, err)
		}
	}
}
