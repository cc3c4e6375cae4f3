package outlog

import (
	"encoding/binary"
	"os"
	"testing"
	"time"
)

// appendTimeV1 appends a Time record as logs written before the log time
// existed hold it: the wall clock alone.
func appendTimeV1(b []byte, wall time.Time) []byte {
	p := binary.BigEndian.AppendUint64(nil, uint64(wall.UnixNano()))
	return append(appendHeader(b, recTime, p), p...)
}

// A log written before the log time existed, with its clock set back
// halfway, reads as it did: each chunk's time is the wall clock's, and no
// step is found (nothing tells a step from the wall clock alone). A writer
// that continues it with its clock further back stamps the log time beside
// the wall clock, from the last time logged on: its chunks do not go back,
// and the step shows there.
func TestTimeRecordsOldAndNew(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(1_700_000_000, 0)
	var b []byte
	b = appendSize(appendTimeV1(b, t0), 80, 24)
	b = append(appendHeader(b, recData, []byte("one\r\n")), "one\r\n"...)
	b = append(appendHeader(appendTimeV1(b, t0.Add(-time.Hour)), recData, []byte("two\r\n")), "two\r\n"...)
	if err := os.WriteFile(segPath(dir, 0), b, 0o600); err != nil {
		t.Fatal(err)
	}
	l := openT(t, dir, Options{Now: func() time.Time { return t0.Add(-2 * time.Hour) }, Mono: func() time.Duration { return time.Minute }})
	if l.Recovered() != 0 {
		t.Fatalf("the old records were taken for a torn tail: %d bytes dropped", l.Recovered())
	}
	l.Append([]byte("three\r\n"))
	l.Close()

	l = openT(t, dir, Options{ReadOnly: true})
	defer l.Close()
	if l.End() != 17 {
		t.Fatalf("End = %d, want 17", l.End())
	}
	want := []struct {
		off        uint64
		time, wall time.Time
	}{
		{0, t0, t0},
		{5, t0.Add(-time.Hour), t0.Add(-time.Hour)},
		// Continued from the last log time: the old record's wall clock.
		{10, t0.Add(-time.Hour), t0.Add(-2 * time.Hour)},
	}
	var got []Chunk
	var steps ClockSteps
	found := 0
	for _, c := range collectChunks(t, l, 0, l.End()) {
		if d, ok := steps.Step(c); ok {
			found++
			if c.Offset != 10 || d != -time.Hour {
				t.Errorf("step %v found at %d, want one of -1h at 10", d, c.Offset)
			}
		}
		if c.Kind == ChunkData {
			got = append(got, c)
		}
	}
	if found != 1 {
		t.Errorf("%d steps found, want one", found)
	}
	if len(got) != len(want) {
		t.Fatalf("%d data chunks, want %d", len(got), len(want))
	}
	for i, w := range want {
		if c := got[i]; c.Offset != w.off || !c.Time.Equal(w.time) || !c.Wall.Equal(w.wall) {
			t.Errorf("chunk %d: offset %d time %v wall %v; want %d, %v, %v", i, c.Offset, c.Time, c.Wall, w.off, w.time, w.wall)
		}
	}
	// The writer's record is the new one: 16 bytes.
	seg, _ := os.ReadFile(segPath(dir, 0))
	if at := len(b); len(seg) < at+timeRecLen || seg[at] != recTime || binary.BigEndian.Uint32(seg[at+1:]) != 16 {
		t.Errorf("the continued log's Time record is not wall and log time: % x", seg[at:min(len(seg), at+timeRecLen)])
	}
}
