package sessiondir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A status record written is read back; a torn, cut, edited or foreign
// record is ErrStatusDamaged, never a wrong status.
func TestStatusRecord(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	code := 7
	full := Status{
		HolderPid: 12, StartedAt: at.Add(-time.Hour), Child: &ChildExit{At: at, ExitCode: 7},
		EndedAt: &at, ExitCode: &code, Signal: 0, Closed: true, Interrupted: true, Reason: "why", End: 1 << 40, ShutdownAt: &at,
	}
	for _, s := range []Status{{HolderPid: 1, StartedAt: at}, full, {Reason: strings.Repeat("é", 2000)}} {
		rec, err := EncodeStatus(s)
		if err != nil || len(rec) != StatusSize {
			t.Fatalf("EncodeStatus: %d bytes, %v; want %d", len(rec), err, StatusSize)
		}
		got, err := DecodeStatus(rec)
		if err != nil {
			t.Fatalf("DecodeStatus: %v", err)
		}
		if len(s.Reason) > 100 {
			// Cut to fit, at a rune boundary.
			if !strings.HasPrefix(s.Reason, got.Reason) || len(got.Reason) < 100 || !strings.HasSuffix(got.Reason, "é") {
				t.Fatalf("a long reason read back as %d bytes %q", len(got.Reason), got.Reason)
			}
			got.Reason = s.Reason
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("read back %+v, want %+v", got, s)
		}
	}

	good, _ := EncodeStatus(full)
	other, _ := EncodeStatus(Status{HolderPid: 99, StartedAt: at})
	for name, b := range map[string][]byte{
		"empty":              nil,
		"zeros":              make([]byte, StatusSize),
		"cut in the JSON":    good[:60],
		"torn over another":  append(append([]byte{}, good[:100]...), other[100:]...),
		"torn under another": append(append([]byte{}, other[:40]...), good[40:]...),
		"a byte flipped":     flip(good, 50),
		"head flipped":       flip(good, 3),
		"no newline":         bytes.ReplaceAll(good, []byte{'\n'}, []byte{' '}),
		"length too long":    []byte(statusMagic + " 00000000 999\n{}"),
		"length negative":    []byte(statusMagic + " 00000000 -1\n{}"),
		"crc not hex":        []byte(statusMagic + " zzzzzzzz 2\n{}"),
		"another magic":      []byte("termkeep-status-9 " + string(good[len(statusMagic)+1:])),
		"json of a list":     []byte(statusMagic + " 223e9c81 2\n[]"),
	} {
		if s, err := DecodeStatus(b); !errors.Is(err, ErrStatusDamaged) {
			t.Errorf("%s: DecodeStatus = %+v, %v; want ErrStatusDamaged", name, s, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 0x20
	return c
}

// ReadMeta takes the end from the status record of the same run when
// meta.json has none, and ignores the record of another run (a restore's
// holder whose new record could not be written) and a damaged one.
func TestReadMetaCompletedByStatus(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	code := 7
	run := Meta{ID: "s", HolderPid: 10, Pid: 11, StartedAt: at, End: 5}
	ended := run
	ended.EndedAt, ended.ExitCode, ended.End = &at, &code, 42
	child := run
	child.Child = &ChildExit{At: at, ExitCode: 3}
	otherRun := run
	otherRun.StartedAt = at.Add(time.Second)
	stopped := run
	stopped.EndedAt, stopped.Interrupted, stopped.Reason, stopped.End = &at, true, "stopped by SIGTERM", 9
	for _, tc := range []struct {
		name   string
		meta   Meta
		status *Status // nil: no record; a damaged one when damaged
		damage bool
		state  string
		code   int // -1: none
		end    uint64
		child  bool
	}{
		{"no record", run, nil, false, "running", -1, 5, false},
		{"running in both", run, ptr(StatusOf(run)), false, "running", -1, 5, false},
		{"ended only in the record", run, ptr(StatusOf(ended)), false, "exited", 7, 42, false},
		{"the child's exit only in the record", run, ptr(StatusOf(child)), false, "running", -1, 5, true},
		{"interrupted only in the record", run, ptr(StatusOf(stopped)), false, "interrupted", -1, 9, false},
		{"ended in meta.json, not in the record", ended, ptr(StatusOf(run)), false, "exited", 7, 42, false},
		{"the record of another run", run, ptr(StatusOf(otherRun)), false, "running", -1, 5, false},
		{"another run's record says ended", otherRun, ptr(StatusOf(ended)), false, "running", -1, 5, false},
		{"a damaged record", run, ptr(StatusOf(ended)), true, "running", -1, 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteMeta(dir, tc.meta); err != nil {
				t.Fatal(err)
			}
			if tc.status != nil {
				w, err := CreateStatus(dir, *tc.status, nil)
				if err != nil {
					t.Fatal(err)
				}
				w.Close()
				if tc.damage {
					f, _ := os.OpenFile(filepath.Join(dir, StatusFile), os.O_RDWR, 0)
					f.WriteAt([]byte("xx"), 70)
					f.Close()
				}
			}
			m, err := ReadMeta(dir)
			if err != nil {
				t.Fatal(err)
			}
			code := -1
			if m.ExitCode != nil {
				code = *m.ExitCode
			}
			if m.State() != tc.state || code != tc.code || m.End != tc.end || (m.Child != nil) != tc.child || m.Pid != 11 {
				t.Fatalf("read %s code %d end %d child %v, want %s %d %d %v", m.State(), code, m.End, m.Child, tc.state, tc.code, tc.end, tc.child)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// The record is overwritten in place: its file keeps its size and its
// inode, so no block is allocated after CreateStatus.
func TestStatusOverwritesInPlace(t *testing.T) {
	dir := t.TempDir()
	w, err := CreateStatus(dir, Status{HolderPid: 1, Reason: strings.Repeat("x", 300)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := filepath.Join(dir, StatusFile)
	before, _ := os.Stat(p)
	code := 0
	if err := w.Write(Status{HolderPid: 1, ExitCode: &code}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) || after.Size() != StatusSize {
		t.Fatalf("the record was replaced or resized (%d bytes)", after.Size())
	}
	if s, err := ReadStatus(dir); err != nil || s.ExitCode == nil || s.Reason != "" {
		t.Fatalf("ReadStatus = %+v, %v", s, err)
	}
}

// Whatever the bytes, DecodeStatus returns a status or ErrStatusDamaged,
// and a status it returns encodes to a record that decodes and encodes to
// the same bytes again.
func FuzzDecodeStatus(f *testing.F) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	code := 7
	for _, s := range []Status{{}, {HolderPid: 3, StartedAt: at, EndedAt: &at, ExitCode: &code, Reason: "r"}} {
		b, _ := EncodeStatus(s)
		f.Add(b)
		f.Add(b[:70])
	}
	f.Add([]byte(statusMagic + " 00000000 2\n{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeStatus(b)
		if err != nil {
			if !errors.Is(err, ErrStatusDamaged) {
				t.Fatalf("error %v is not ErrStatusDamaged", err)
			}
			return
		}
		rec, err := EncodeStatus(s)
		if err != nil {
			return // a reason too long to keep whole: cut, so not the same
		}
		again, err := DecodeStatus(rec)
		if err != nil {
			t.Fatalf("a decoded status does not survive a round trip: %v", err)
		}
		if rec2, err := EncodeStatus(again); err != nil || !bytes.Equal(rec, rec2) {
			t.Fatalf("re-encoded %q, %v; want %q", rec2, err, rec)
		}
	})
}

// The mark of a coming shutdown that only the status record could take
// (a full disk refused meta.json's new copy) is read as if meta.json had
// it; another run's is not.
func TestReadMetaShutdownMark(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := Meta{ID: "s", HolderPid: 10, Pid: 11, StartedAt: at}
	marked := run
	marked.ShutdownAt = &at
	otherRun := marked
	otherRun.StartedAt = at.Add(time.Second)
	for _, tc := range []struct {
		name         string
		meta, status Meta
		want         bool
	}{
		{"in neither", run, run, false},
		{"in both", marked, marked, true},
		{"only in the record", run, marked, true},
		{"only in meta.json", marked, run, true},
		{"in another run's record", run, otherRun, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteMeta(dir, tc.meta); err != nil {
				t.Fatal(err)
			}
			w, err := CreateStatus(dir, StatusOf(tc.status), nil)
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
			m, err := ReadMeta(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.ShutdownAt != nil; got != tc.want {
				t.Fatalf("shutdown mark read %v, want %v", got, tc.want)
			}
		})
	}
}
