//go:build linux

package client

import (
	"bufio"
	"testing"

	"termkeep/internal/fdpass/fdpasstest"
	"termkeep/internal/wire"
)

// A session that ends while a ping is on its way: the server sends the
// ping, the last output and the Exit, and closes before the ping's answer
// can reach it. The answer fails (EPIPE), and the frames the client has
// already received must still be read: they are the session's end.
func TestStreamReadsPastAPingItCannotAnswer(t *testing.T) {
	a, b := fdpasstest.Pair(t)
	s := &Stream{conn: a, r: bufio.NewReader(a), w: wire.NewWriter(a)}
	w := wire.NewWriter(b)
	w.Uint64(wire.TypeServerPing, 1)
	w.Output(0, []byte("last line\r\n"))
	w.JSON(wire.TypeExit, wire.Exit{End: 11})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	b.Close()

	f, err := s.Next()
	if err != nil || f.Type != wire.TypeOutput {
		t.Fatalf("first frame: %v, %v; want the output", f.Type, err)
	}
	if _, data, _ := wire.ParseOutput(f.Payload); string(data) != "last line\r\n" {
		t.Errorf("output %q", data)
	}
	f, err = s.Next()
	if err != nil || f.Type != wire.TypeExit {
		t.Fatalf("second frame: %v, %v; want the Exit", f.Type, err)
	}
	if _, err := s.Next(); err == nil {
		t.Error("a frame after the end of the stream")
	}
}
