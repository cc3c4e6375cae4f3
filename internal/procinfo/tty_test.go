package procinfo

import "testing"

// StatTTY's table: the controlling terminal from /proc/<pid>/stat, a
// command name with spaces and parentheses included.
func TestStatTTY(t *testing.T) {
	for _, tc := range []struct {
		stat string
		tty  uint64
		ok   bool
	}{
		{"1234 (bash) S 1 1234 1234 34816 1234 4194560", 34816, true},
		{"1234 (a b) c) S 1 1234 1234 34817 -1", 34817, true},
		{"1234 ()) R 1 2 3 0 -1", 0, true},
		{"1234 (x) S 1 2 3 -1 -1", 0xffffffff, true}, // printed signed
		{"1234 (x) S 1 2 3", 0, false},
		{"1234 (x) S 1 2 3 tty", 0, false},
		{"1234 x S 1 2 3 4 5", 0, false},
		{"", 0, false},
	} {
		tty, ok := StatTTY([]byte(tc.stat))
		if tty != tc.tty || ok != tc.ok {
			t.Errorf("StatTTY(%q) = %d, %v; want %d, %v", tc.stat, tty, ok, tc.tty, tc.ok)
		}
	}
	// /dev/pts/1 is major 136, minor 1; minors past 255 use the high bits.
	for _, tc := range []struct {
		nr           uint64
		major, minor uint32
	}{
		{34817, 136, 1}, {136<<8 | 0xff, 136, 255}, {1<<20 | 136<<8 | 0x2c, 136, 300}, {0, 0, 0},
	} {
		if ma, mi := TTYDevice(tc.nr); ma != tc.major || mi != tc.minor {
			t.Errorf("TTYDevice(%d) = %d,%d; want %d,%d", tc.nr, ma, mi, tc.major, tc.minor)
		}
	}
}

// StatTTY never panics, and what it finds is the fifth field after the
// name.
func FuzzStatTTY(f *testing.F) {
	f.Add([]byte("1234 (bash) S 1 1234 1234 34816 1234 4194560"))
	f.Add([]byte("1 (a) b)) S 1 2 3 -5"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tty, ok := StatTTY(b)
		if !ok && tty != 0 {
			t.Fatalf("StatTTY(%q) = %d with ok false", b, tty)
		}
	})
}
