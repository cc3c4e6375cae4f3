package remote

import (
	"bytes"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

func TestPreamble(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Versions
		ok   bool
	}{
		{"termkeep-relay 1 11 1", Versions{1, 11, 1}, true},
		{"termkeep-relay 2 40 30", Versions{2, 40, 30}, true},
		{"termkeep-relay 1 11", Versions{}, false},
		{"termkeep-relay 1 11 1 0", Versions{}, false},
		{"termkeep-relay  1 11 1", Versions{}, false},
		{"termkeep-relay 1 011 1", Versions{}, false},
		{"termkeep-relay 1 -1 1", Versions{}, false},
		{"termkeep-relay 1 99999999999999999999 1", Versions{}, false},
		{"termkeep-relay 1 +11 1", Versions{}, false},
		{"Welcome to the box!", Versions{}, false},
		{"", Versions{}, false},
	} {
		got, err := ParsePreamble(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParsePreamble(%q) = %+v, %v", c.in, got, err)
		}
	}
}

// A login script's greeting before the preamble is skipped, up to a
// bound; the bytes after the preamble stay unread.
func TestReadPreamble(t *testing.T) {
	r := strings.NewReader("motd\r\nlast login\ntermkeep-relay 1 11 1\r\nHTTP")
	v, err := readPreamble(r)
	if err != nil || v != (Versions{1, 11, 1}) {
		t.Fatalf("got %+v, %v", v, err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "HTTP" {
		t.Errorf("left %q", rest)
	}
	if _, err := readPreamble(strings.NewReader(strings.Repeat("x\n", maxNoise) + Preamble(Versions{1, 11, 1}))); err != errNoPreamble {
		t.Errorf("after %d bytes of noise: %v", 2*maxNoise, err)
	}
	if _, err := readPreamble(strings.NewReader("termkeep-relay 1 1")); err != io.ErrUnexpectedEOF && err != io.EOF {
		t.Errorf("cut: %v", err)
	}
}

func TestCompatible(t *testing.T) {
	for _, c := range []struct {
		v   Versions
		ok  bool
		why string
	}{
		{Versions{1, 11, 1}, true, "the same"},
		{Versions{1, 9, 1}, true, "an older one this one still speaks"},
		{Versions{1, 14, 5}, true, "a newer one that still speaks this one"},
		{Versions{1, 20, 12}, false, "a newer one that no longer speaks this one"},
		{Versions{1, 0, 0}, false, "one older than this one's oldest"},
		{Versions{2, 11, 1}, false, "another relay"},
	} {
		if got := c.v.Compatible(11, 1); got != c.ok {
			t.Errorf("%s (%+v): compatible %v", c.why, c.v, got)
		}
	}
}

// The relay writes its preamble, then carries bytes both ways; the end
// of its input half-closes the server's connection, and the server's end
// ends it.
func TestRelay(t *testing.T) {
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- Relay(inR, &out, a, Versions{1, 11, 1}) }()
	go inW.Write([]byte("hello"))
	got := make([]byte, 5)
	if _, err := io.ReadFull(b, got); err != nil || string(got) != "hello" {
		t.Fatalf("server read %q, %v", got, err)
	}
	inW.Close()
	if n, err := b.Read(got); err != io.EOF {
		t.Fatalf("the input's end reached the server as %d bytes, %v; want EOF", n, err)
	}
	b.Write([]byte("answer"))
	b.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out.String() != "termkeep-relay 1 11 1\nanswer" {
		t.Errorf("relay wrote %q", out.String())
	}
}

// Any line: ParsePreamble never panics, and what it reads is what
// Preamble writes.
func FuzzParsePreamble(f *testing.F) {
	for _, s := range []string{"termkeep-relay 1 11 1", "termkeep-relay 0 0 0", "termkeep-relay 1 2", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		v, err := ParsePreamble(line)
		if err != nil {
			return
		}
		if Preamble(v) != line+"\n" {
			t.Fatalf("ParsePreamble(%q) = %+v, written back as %q", line, v, Preamble(v))
		}
	})
}
