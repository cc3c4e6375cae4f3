package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// An fg-state frame carries the query's id and the kernel's facts, names
// included, and reads back as written.
func TestFgStateFrame(t *testing.T) {
	for _, s := range []FgState{
		{},
		{ID: 1, Kind: FgReadingTerminal, Pgrp: 123, LeaderComm: "rm", Pid: 123, Comm: "rm"},
		{ID: 1 << 63, Kind: FgWaitingOnEvents, Pgrp: 7, LeaderComm: "cat", Pid: 9, Comm: "less"},
		{ID: 5, Kind: FgRunning, Shell: true, Unread: 3, UnreadKnown: true, Pgrp: 1 << 31, Pid: 2},
		{ID: 6, Kind: FgRunning, LeaderComm: strings.Repeat("é", MaxComm/2), Comm: strings.Repeat("x", MaxComm)},
	} {
		var b bytes.Buffer
		if err := NewWriter(&b).FgState(s); err != nil {
			t.Fatal(err)
		}
		var buf []byte
		f, err := ReadFrame(&b, &buf)
		if err != nil || f.Type != TypeFgState {
			t.Fatalf("read: %v, %s", err, f.Type)
		}
		if err := Validate(f); err != nil {
			t.Fatalf("validate %+v: %v", s, err)
		}
		if got, err := ParseFgState(f.Payload); err != nil || got != s {
			t.Errorf("ParseFgState = %+v, %v; want %+v", got, err, s)
		}
	}
}

// A payload too short, a kind or flag this version does not know, a name
// length past the payload, a long name or one not UTF-8 is malformed.
func TestFgStateRejects(t *testing.T) {
	head := func(kind, flags, n byte) []byte {
		return []byte{0, 0, 0, 0, 0, 0, 0, 1, kind, flags, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, n}
	}
	for name, p := range map[string][]byte{
		"empty":           {},
		"short":           head(1, 0, 0)[:22],
		"kind":            head(4, 0, 0),
		"reserved flag":   head(1, 4, 0),
		"leader past end": append(head(1, 0, 3), 'a', 'b'),
		"long leader":     append(head(1, 0, MaxComm+1), bytes.Repeat([]byte{'a'}, MaxComm+1)...),
		"long comm":       append(head(1, 0, 0), bytes.Repeat([]byte{'a'}, MaxComm+1)...),
		"leader not utf8": append(head(1, 0, 1), 0xff),
		"comm not utf8":   append(head(1, 0, 0), 'a', 0xc3),
	} {
		if _, err := ParseFgState(p); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: ParseFgState(%x) = %v, want malformed", name, p, err)
		}
		if err := Validate(Frame{Type: TypeFgState, Payload: p}); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Validate = %v, want malformed", name, err)
		}
	}
	if err := Validate(Frame{Type: TypeFgQuery, Payload: []byte{1, 2, 3}}); !errors.Is(err, ErrMalformed) {
		t.Errorf("a short fg-query: %v", err)
	}
}

// Only a holder of version 11 is asked; no holder accepts an answer.
func TestFgStateVersion(t *testing.T) {
	if HolderAccepts(10, TypeFgQuery) || !HolderAccepts(11, TypeFgQuery) {
		t.Error("fg-query is for holders of version 11 on")
	}
	if HolderAccepts(Version, TypeFgState) {
		t.Error("a holder accepts an fg-state frame")
	}
	if !FgStates(Version) || FgStates(10) {
		t.Error("FgStates")
	}
	if TypeFgQuery.String() != "fg-query" || TypeFgState.String() != "fg-state" {
		t.Errorf("names %q %q", TypeFgQuery, TypeFgState)
	}
}

// FuzzParseFgState: any payload is either refused as malformed or
// encodes back to itself.
func FuzzParseFgState(f *testing.F) {
	var b bytes.Buffer
	NewWriter(&b).FgState(FgState{ID: 9, Kind: FgReadingTerminal, Pgrp: 4, LeaderComm: "bash", Pid: 5, Comm: "rm"})
	f.Add(b.Bytes()[HeaderSize:])
	f.Add(make([]byte, 23))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		s, err := ParseFgState(p)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not malformed", err)
			}
			return
		}
		var b bytes.Buffer
		NewWriter(&b).FgState(s)
		if got := b.Bytes()[HeaderSize:]; !bytes.Equal(got, p) {
			t.Fatalf("%x re-encodes as %x", p, got)
		}
	})
}
