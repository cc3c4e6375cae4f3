package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	big := bytes.Repeat([]byte("x"), MaxOutputData+10)
	steps := []func() error{
		func() error {
			return w.JSON(TypeHello, Hello{Version: Version, Role: RoleViewer, From: 42, Cols: 80, Rows: 24})
		},
		func() error { return w.Output(7, []byte("hello")) },
		func() error { return w.Output(100, big) }, // split in two frames
		func() error { return w.OutputParts(5, [][]byte{[]byte("ab"), []byte("cd")}) },
		func() error { return w.Input([]byte("ls\r")) },
		func() error { return w.Resize(120, 40) },
		func() error { return w.Resized(9, 100, 30) },
		func() error { return w.Signal(2) },
		func() error { return w.Close(3000) },
		func() error { return w.Uint64(TypeAck, 99) },
		func() error { return w.Gap(1, 10) },
		func() error { return w.Error(CodeNotFound, "no such session") },
		func() error { return w.JSON(TypeExit, Exit{State: "exited", End: 5}) },
	}
	for i, s := range steps {
		if err := s(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	var buf []byte
	want := []Type{TypeHello, TypeOutput, TypeOutput, TypeOutput, TypeOutput, TypeInput, TypeResize, TypeResized,
		TypeSignal, TypeClose, TypeAck, TypeGap, TypeError, TypeExit}
	for i, typ := range want {
		f, err := ReadFrame(&b, &buf)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if f.Type != typ {
			t.Fatalf("frame %d: type %s, want %s", i, f.Type, typ)
		}
		if err := Validate(f); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		switch i {
		case 1:
			off, data, _ := ParseOutput(f.Payload)
			if off != 7 || string(data) != "hello" {
				t.Fatalf("output = %d %q", off, data)
			}
		case 2:
			off, data, _ := ParseOutput(f.Payload)
			if off != 100 || len(data) != MaxOutputData {
				t.Fatalf("first part: %d %d", off, len(data))
			}
		case 3:
			off, data, _ := ParseOutput(f.Payload)
			if off != 100+MaxOutputData || len(data) != 10 {
				t.Fatalf("second part: %d %d", off, len(data))
			}
		case 4:
			off, data, _ := ParseOutput(f.Payload)
			if off != 5 || string(data) != "abcd" {
				t.Fatalf("parts: %d %q", off, data)
			}
		case 6:
			c, r, _ := ParseResize(f.Payload)
			if c != 120 || r != 40 {
				t.Fatalf("resize %dx%d", c, r)
			}
		case 12:
			code, msg, _ := ParseError(f.Payload)
			if code != CodeNotFound || msg != "no such session" {
				t.Fatalf("error %d %q", code, msg)
			}
		}
	}
	if _, err := ReadFrame(&b, &buf); err != io.EOF {
		t.Fatalf("after last frame: %v, want EOF", err)
	}
}

func TestReadFrameRejects(t *testing.T) {
	hdr := func(typ byte, n uint32) []byte {
		b := []byte{typ, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[1:], n)
		return b
	}
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"unknown type", hdr(0x7e, 0), ErrMalformed},
		{"zero type", hdr(0, 0), ErrMalformed},
		{"too large", hdr(byte(TypeInput), MaxPayload+1), ErrMalformed},
		{"huge", hdr(byte(TypeOutput), 0xffffffff), ErrMalformed},
		{"cut header", []byte{byte(TypeInput), 0}, io.ErrUnexpectedEOF},
		{"cut payload", append(hdr(byte(TypeInput), 10), "abc"...), io.ErrUnexpectedEOF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf []byte
			_, err := ReadFrame(bytes.NewReader(c.in), &buf)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if cap(buf) > 4096 {
				t.Fatalf("allocated %d bytes for a rejected frame", cap(buf))
			}
		})
	}
}

func TestValidateRejects(t *testing.T) {
	cases := []Frame{
		{TypeResize, []byte{0, 0, 0, 24}},                             // zero cols
		{TypeResize, []byte{0xff, 0xff, 0, 24}},                       // too wide
		{TypeResize, []byte{0, 80}},                                   // short
		{TypeSignal, []byte{0}},                                       // signal 0
		{TypeSignal, []byte{64}},                                      // out of range
		{TypeOutput, []byte{1, 2, 3}},                                 // no offset
		{TypeGap, append(make([]byte, 7), 1, 0, 0, 0, 0, 0, 0, 0, 0)}, // from > to
		{TypeHello, []byte("{not json")},
		{TypeHello, []byte("\xff\xfe")},
		{TypeAck, []byte{1}},
		{Type(0x30), nil},
		{TypeShutdown, nil},
		{TypeShutdown, []byte{2}},
		{TypeShutdown, []byte{1, 1}},
		{TypePrepared, []byte{}},
		{TypePrepared, []byte{0xff}},
		{TypeLane, nil},
		{TypeLane, make([]byte, 7)},
		{TypeLane, make([]byte, 9)},
		{TypeLaneOff, []byte{0}},
		{TypeLaneEnd, make([]byte, 4)},
	}
	for i, f := range cases {
		if err := Validate(f); !errors.Is(err, ErrMalformed) {
			t.Errorf("case %d (%s): err = %v, want ErrMalformed", i, f.Type, err)
		}
	}
}

func TestStickyError(t *testing.T) {
	w := NewWriter(failWriter{})
	if err := w.Input([]byte("a")); err == nil {
		t.Fatal("no error from a failing writer")
	}
	if err := w.Resize(80, 24); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("second write: %v, want the sticky error", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("boom") }

// FuzzReadFrame feeds arbitrary bytes to the decoder: it must never panic,
// never allocate beyond MaxPayload, and every frame it returns must either
// validate or be rejected with ErrMalformed.
func FuzzReadFrame(f *testing.F) {
	var b bytes.Buffer
	w := NewWriter(&b)
	w.JSON(TypeHello, Hello{Version: 1, Role: RoleViewer, From: -1})
	w.Output(3, []byte("abc"))
	w.Resize(80, 24)
	w.Gap(1, 2)
	w.Error(1, "x")
	f.Add(b.Bytes())
	f.Add([]byte{0x42, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{0x01, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		var buf []byte
		for {
			fr, err := ReadFrame(r, &buf)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && err != io.EOF && err != io.ErrUnexpectedEOF {
					t.Fatalf("unexpected error kind: %v", err)
				}
				return
			}
			if len(fr.Payload) > MaxPayload {
				t.Fatalf("payload of %d bytes", len(fr.Payload))
			}
			if err := Validate(fr); err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("validate: %v", err)
			}
		}
	})
}

func BenchmarkOutput64K(b *testing.B) {
	w := NewWriter(io.Discard)
	data := make([]byte, 64<<10)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		w.Output(uint64(i), data)
	}
}

func TestOutputInPlace(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	frame := append(make([]byte, OutputHeaderSize), "in place"...)
	if err := w.OutputInPlace(1234, frame); err != nil {
		t.Fatal(err)
	}
	if err := w.OutputInPlace(9, make([]byte, OutputHeaderSize)); err != nil {
		t.Fatalf("an empty frame: %v", err)
	}
	for _, n := range []int{OutputHeaderSize - 1, OutputHeaderSize + MaxOutputData + 1} {
		if err := w.OutputInPlace(0, make([]byte, n)); err == nil {
			t.Errorf("a %d-byte frame was written", n)
		}
	}
	var buf []byte
	for _, want := range []struct {
		off  uint64
		data string
	}{{1234, "in place"}, {9, ""}} {
		f, err := ReadFrame(&b, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(f); err != nil {
			t.Fatal(err)
		}
		off, data, err := ParseOutput(f.Payload)
		if f.Type != TypeOutput || err != nil || off != want.off || string(data) != want.data {
			t.Errorf("got %s %d %q %v, want output %d %q", f.Type, off, data, err, want.off, want.data)
		}
	}
	if b.Len() != 0 {
		t.Errorf("%d bytes left over: a bad frame was written", b.Len())
	}
}

// A holder is sent only what its version accepts: a first-release holder
// (version 1) refuses cwd and name frames and hangs up; frames away from
// the pty, or unknown ones, no holder accepts from a server.
func TestHolderAccepts(t *testing.T) {
	for _, tc := range []struct {
		version int
		typ     Type
		want    bool
	}{
		{1, TypeInput, true}, {1, TypeResize, true}, {1, TypeSignal, true}, {1, TypeClose, true},
		{1, TypeAck, true}, {1, TypePing, true},
		{1, TypeCwd, false}, {1, TypeName, false},
		{2, TypeCwd, true}, {2, TypeName, true}, {2, TypeInput, true},
		{Version + 5, TypeCwd, true},
		{0, TypeInput, false}, {-1, TypeInput, false},
		{2, TypeHello, false}, {2, TypeAnswer, false}, {2, TypeOutput, false}, {2, TypeLog, false},
		{2, Type(0x3f), false}, {2, Type(0xff), false},
		{4, TypeShutdown, false}, {5, TypeShutdown, true}, {5, TypePrepared, false},
	} {
		if got := HolderAccepts(tc.version, tc.typ); got != tc.want {
			t.Errorf("HolderAccepts(%d, %s) = %v, want %v", tc.version, tc.typ, got, tc.want)
		}
	}
}

// The shutdown frame and its answer carry one byte: 1, a shutdown is
// coming; 0, it was cancelled.
func TestShutdownFrames(t *testing.T) {
	for _, typ := range []Type{TypeShutdown, TypePrepared} {
		for _, on := range []bool{true, false} {
			var b bytes.Buffer
			if err := NewWriter(&b).Shutdown(typ, on); err != nil {
				t.Fatal(err)
			}
			var buf []byte
			f, err := ReadFrame(&b, &buf)
			if err != nil || f.Type != typ {
				t.Fatalf("read %s: %v, %s", typ, err, f.Type)
			}
			if err := Validate(f); err != nil {
				t.Fatalf("validate %s: %v", typ, err)
			}
			got, err := ParseShutdown(f.Payload)
			if err != nil || got != on {
				t.Fatalf("ParseShutdown(%s %v) = %v, %v", typ, on, got, err)
			}
		}
	}
}

// The lane frames of version 7 validate in their exact shapes only.
func TestValidateLaneFrames(t *testing.T) {
	for _, f := range []Frame{{TypeLane, make([]byte, 8)}, {TypeLaneOff, nil}, {TypeLaneEnd, make([]byte, 8)}} {
		if err := Validate(f); err != nil {
			t.Errorf("%s: %v", f.Type, err)
		}
	}
	if !HolderAccepts(7, TypeLane) || !HolderAccepts(7, TypeLaneOff) || HolderAccepts(6, TypeLane) || HolderAccepts(6, TypeLaneOff) {
		t.Error("a holder accepts lane frames from version 7 on, and only then")
	}
}

// A viewer's kind is the same string on the wire and in the API as before
// it had a type; one this build does not know passes through unchanged.
func TestViewerKindJSON(t *testing.T) {
	in := []ViewerInfo{{ID: 1, Kind: ViewerCLI}, {ID: 2, Kind: ViewerWeb}, {ID: 3, Kind: ViewerShare}, {ID: 4, Kind: "bogus"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"id":1,"kind":"cli"},{"id":2,"kind":"web"},{"id":3,"kind":"share"},{"id":4,"kind":"bogus"}]`
	if string(b) != want {
		t.Fatalf("marshalled %s, want %s", b, want)
	}
	var out []ViewerInfo
	if err := json.Unmarshal(b, &out); err != nil || !slices.Equal(out, in) {
		t.Fatalf("unmarshalled %+v (%v), want %+v", out, err, in)
	}
}
