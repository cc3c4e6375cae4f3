package procinfo

import (
	"bytes"
	"strconv"
	"testing"
)

func TestStatField(t *testing.T) {
	for _, c := range []struct {
		stat        string
		n           int
		comm, field string
		ok          bool
	}{
		{"12 (bash) S 1 12 12 34816 -1", 0, "bash", "S", true},
		{"12 (bash) S 1 12 12 34816 -1", 2, "bash", "12", true},
		{"12 (bash) S 1 12 12 34816 -1", 4, "bash", "34816", true},
		{"12 (bash) S 1 12 12 34816 -1\n", 5, "bash", "-1", true},
		{"12 (bash) S 1 12 12 34816 -1\n", 6, "", "", false},
		{"7 (a) b) (c) R 1 7 7 0", 0, "a) b) (c", "R", true},
		{"7 (two  spaces) Z 1 99 7", 2, "two  spaces", "99", true},
		{"7 (x)", 0, "", "", false},
		{"7 x) S 1 2", 0, "", "", false},
		{"7 (x S 1 2", 0, "", "", false},
		{")(", 0, "", "", false},
		{"", 0, "", "", false},
	} {
		comm, field, ok := StatField([]byte(c.stat), c.n)
		if ok != c.ok || string(comm) != c.comm || string(field) != c.field {
			t.Errorf("StatField(%q, %d) = %q, %q, %v; want %q, %q, %v", c.stat, c.n, comm, field, ok, c.comm, c.field, c.ok)
		}
	}
}

func TestInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"34816", 34816, true}, {"-1", -1, true}, {"", 0, false}, {"-", 0, false},
		{"1a", 0, false}, {"+1", 0, false}, {"999999999999999999", 999999999999999999, true}, {"9999999999999999999", 0, false},
	} {
		if got, ok := Int([]byte(c.in)); got != c.want || ok != c.ok {
			t.Errorf("Int(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// FuzzStatField holds StatField to the plain reading: the fields after
// the last ')' split on blanks.
func FuzzStatField(f *testing.F) {
	f.Add([]byte("12 (bash) S 1 12 12 34816 -1\n"), 2)
	f.Add([]byte("7 (a) b) (c) R 1 7 7 0"), 0)
	f.Fuzz(func(t *testing.T, stat []byte, n int) {
		if n < 0 || n > 60 {
			return
		}
		comm, field, ok := StatField(stat, n)
		i, j := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if i < 0 || j < i {
			if ok {
				t.Fatalf("%q: a field without a name", stat)
			}
			return
		}
		fs := bytes.FieldsFunc(stat[j+1:], isBlankRune)
		if want := n < len(fs); ok != want {
			t.Fatalf("%q field %d: ok %v, want %v", stat, n, ok, want)
		}
		if ok && (!bytes.Equal(field, fs[n]) || !bytes.Equal(comm, stat[i+1:j])) {
			t.Fatalf("%q field %d: %q (%q), want %q", stat, n, field, comm, fs[n])
		}
		if v, ok := Int(field); ok {
			if w, err := strconv.ParseInt(string(field), 10, 64); err != nil || w != v {
				t.Fatalf("Int(%q) = %d; strconv says %d, %v", field, v, w, err)
			}
		}
	})
}

func isBlankRune(r rune) bool { return r < 0x80 && isBlank(byte(r)) }
