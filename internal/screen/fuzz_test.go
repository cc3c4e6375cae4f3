package screen

import (
	"bytes"
	"strings"
	"testing"
)

// fuzzRun feeds data to a screen as plan says: each plan byte below 0xF0
// writes the next b+1 bytes of data, 0xF0 and up resizes to the sizes in
// the next two plan bytes; the rest of data is written last.
func fuzzRun(t testing.TB, size uint16, plan, data []byte, check bool) *Screen {
	s := New(int(size&0x7F)+1, int(size>>7&0x3F)+1, Options{ScrollbackLines: 40, ScrollbackBytes: 2048})
	for len(plan) > 0 {
		op := plan[0]
		plan = plan[1:]
		if op >= 0xF0 {
			if len(plan) < 2 {
				break
			}
			s.Resize(int(plan[0]&0x7F)+1, int(plan[1]&0x3F)+1)
			plan = plan[2:]
		} else {
			n := min(int(op)+1, len(data))
			s.Write(data[:n])
			data = data[n:]
		}
		if check {
			checkInvariants(t, s)
		}
	}
	s.Write(data)
	checkInvariants(t, s)
	return s
}

func fuzzSeeds(f *testing.F) {
	for _, g := range allInputs() {
		f.Add(uint16(g.cols-1)|uint16(g.rows-1)<<7, []byte{3, 0xF0, 7, 3, 5}, []byte(g.in))
	}
	f.Add(uint16(10|4<<7), []byte{}, []byte("\x1b[?1049h\x1b[2;3r\x1b[?6h\x1b[3;4Hx\x1b[4h中\x1b(0q\x0e\x1b]8;;u\x07l"))
	f.Add(uint16(5|2<<7), []byte{10, 0xF1, 2, 1, 10, 0xF2, 30, 5}, []byte(strings.Repeat("wrapped text 中文 e\u0301 ", 8)))
	for seed := int64(0); seed < 8; seed++ {
		data, _, _, cols, rows := randomStream(seed, 400)
		f.Add(uint16(cols-1)|uint16(rows-1)<<7, []byte{50, 0xF3, 9, 4, 80, 0xF4, 20, 2}, data)
	}
}

// FuzzScreen feeds arbitrary output and resizes: no panic, the invariants
// hold after each step, memory stays within the scrollback's limits, and
// the snapshot and the checkpoint reproduce the screen.
func FuzzScreen(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, size uint16, plan []byte, data []byte) {
		if len(plan) > 64 || len(data) > 4096 {
			return
		}
		s := fuzzRun(t, size, plan, data, true)
		if m := s.sb.memory(); m > s.sb.maxBytes+2*maxChunkSize+s.sb.maxLines*2*sbRefSize {
			t.Fatalf("scrollback holds %d bytes for a limit of %d", m, s.sb.maxBytes)
		}
		if len(s.styles.list) > 2*s.styleLimit+len(data) || len(s.combined) > 2*s.combLimit+len(data) {
			t.Fatalf("tables: %d styles, %d strings", len(s.styles.list), len(s.combined))
		}

		// Checkpoint: an exact copy.
		c := cloneScreen(t, s)
		want, got := s.Dump(-1), c.Dump(-1)
		if d := Diff(&want, &got, 5); d != nil || len(want.Scrollback) != len(got.Scrollback) {
			t.Fatalf("restored checkpoint differs:\n  %s", strings.Join(d, "\n  "))
		}
		s.Write([]byte(probe))
		c.Write([]byte(probe))
		want, got = s.Dump(-1), c.Dump(-1)
		if d := Diff(&want, &got, 5); d != nil {
			t.Fatalf("after more output the restored checkpoint differs:\n  %s", strings.Join(d, "\n  "))
		}

		// Compacting the history changes nothing but its memory; a
		// trimmed checkpoint is the checkpoint of a trimmed copy.
		s.CompactScrollback()
		got = s.Dump(-1)
		if d := Diff(&want, &got, 5); d != nil || len(want.Scrollback) != len(got.Scrollback) {
			t.Fatalf("compacting the history changed the screen:\n  %s", strings.Join(d, "\n  "))
		}
		keep := int(size) % 50
		trimmed, _ := s.MarshalTrimmed(keep)
		tc := cloneScreen(t, s)
		tc.TrimScrollback(keep)
		if tb, _ := tc.MarshalBinary(); !bytes.Equal(trimmed, tb) {
			t.Fatalf("MarshalTrimmed(%d) is not the checkpoint of a copy trimmed to %d lines", keep, keep)
		}

		// Snapshot: the same screen.
		snap := s.Snapshot(-1)
		r := New(s.cols, s.rows, Options{ScrollbackLines: 40, ScrollbackBytes: 2048})
		r.Write(snap)
		want, got = s.Dump(-1), r.Dump(-1)
		maskInexact(s, &want, &got)
		if d := Diff(&want, &got, 5); d != nil {
			t.Fatalf("snapshot %q differs:\n  %s", snap, strings.Join(d, "\n  "))
		}
	})
}

// maskInexact blanks, in both dumps, the cells a snapshot cannot recreate
// (see exactCell).
func maskInexact(s *Screen, a, b *Dump) {
	mask := func(lines []DumpLine, y int, l *line, nextWrapped bool) {
		if y < 0 || y >= len(lines) {
			return
		}
		for x := 0; x < s.cols && x < len(l.cells); x++ {
			if !s.exactCell(l.cells, x, nextWrapped) {
				for len(lines[y].Cells) <= x {
					lines[y].Cells = append(lines[y].Cells, DumpCell{Ch: " ", W: 1})
				}
				lines[y].Cells[x] = DumpCell{Ch: "?", W: 1}
			}
		}
	}
	rows := s.cur.lines
	for y := range rows {
		next := y+1 < len(rows) && rows[y+1].wrapped
		for _, d := range []*Dump{a, b} {
			mask(d.Screen, y, &rows[y], next)
		}
	}
	n := s.sb.len()
	var l line
	for i := 0; i < n; i++ {
		if s.decodeLine(s.sb.line(i), s.cols, &l) != nil {
			continue
		}
		next := false
		if i+1 < n {
			var m line
			if s.decodeLine(s.sb.line(i+1), s.cols, &m) == nil {
				next = m.wrapped
			}
		} else if s.cur == s.normal {
			next = rows[0].wrapped
		}
		for _, d := range []*Dump{a, b} {
			mask(d.Scrollback, len(d.Scrollback)-(n-i), &l, next)
		}
	}
}

// FuzzUnmarshal: any input is rejected or gives a working screen, never a
// panic.
func FuzzUnmarshal(f *testing.F) {
	for _, g := range allInputs() {
		s := g.run(f)
		b, _ := s.MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := New(4, 2, Options{})
		if err := s.UnmarshalBinary(b); err != nil {
			return
		}
		checkInvariants(t, s)
		s.Write([]byte(probe))
		s.Resize(7, 3)
		checkInvariants(t, s)
		_ = s.Snapshot(-1)
		_ = s.ANSI(-1)
		if _, err := s.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	})
}
