package wire

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// The terminal's foreground, as the kernel says it (version 11): what
// tells a program waiting for an answer from one at work, and a shell at
// its prompt from one whose prompt a program has taken over. Only the
// holder can ask: it owns the pty master and is the ancestor of every
// process in the session, so it may read their /proc/PID/syscall even
// under Yama's ptrace_scope=1.
//
//   - TypeFgQuery, server → holder: id uint64, chosen by the server.
//   - TypeFgState, holder → server: the answer, carrying the query's id
//     (FgState). Every query is answered once; answers may come in
//     another order than their queries.
const (
	TypeFgQuery Type = 0x13
	TypeFgState Type = 0x54
)

// FgStates reports whether a peer of version speaks fg-query and fg-state.
func FgStates(version int) bool { return version >= 11 }

// FgKind is what the terminal's foreground process group is doing.
type FgKind uint8

const (
	// FgUnknown: the holder cannot tell (not Linux, no foreground
	// group, /proc unreadable).
	FgUnknown FgKind = 0
	// FgRunning: a process of the group runs, or sleeps in something
	// other than reading the terminal (nanosleep, wait4, futex, a file
	// or socket read).
	FgRunning FgKind = 1
	// FgReadingTerminal: a process of the group is blocked in read on
	// the terminal: the next bytes typed go to it.
	FgReadingTerminal FgKind = 2
	// FgWaitingOnEvents: every process of the group is blocked, one in
	// poll, select or epoll while holding the terminal open: most
	// likely waiting for a key among other events (vim, less, a REPL).
	FgWaitingOnEvents FgKind = 3
)

func (k FgKind) String() string {
	switch k {
	case FgRunning:
		return "running"
	case FgReadingTerminal:
		return "reading_terminal"
	case FgWaitingOnEvents:
		return "waiting_on_events"
	}
	return "unknown"
}

// MaxComm bounds a process name in an fg-state frame (the kernel's are
// at most 15 bytes; the room is for another kernel's).
const MaxComm = 64

// FgState is the holder's answer to an fg-query.
type FgState struct {
	ID   uint64
	Kind FgKind
	// Shell: the foreground group is the session's program's own (its
	// process group): a shell with no job in the foreground.
	Shell bool
	// Unread is how many bytes typed the terminal's reader has not yet
	// taken (TIOCINQ on the terminal side; in canonical mode the kernel
	// counts complete lines only), when UnreadKnown.
	Unread      uint32
	UnreadKnown bool
	// Pgrp is the foreground process group, its leader's pid; 0 unknown.
	Pgrp       uint32
	LeaderComm string
	// Pid and Comm are the process that decided Kind: the reader of
	// the terminal, the one waiting on events, else the group's leader.
	Pid  uint32
	Comm string
}

const (
	fgShellFlag  = 0x01
	fgUnreadFlag = 0x02
)

// FgQuery writes an fg-query frame.
func (w *Writer) FgQuery(id uint64) error { return w.Uint64(TypeFgQuery, id) }

// FgState writes an fg-state frame. Names longer than MaxComm, or not
// UTF-8, are the caller's to avoid: the frame would be refused.
func (w *Writer) FgState(s FgState) error {
	b := w.begin(TypeFgState, 23+len(s.LeaderComm)+len(s.Comm))
	b = binary.BigEndian.AppendUint64(b, s.ID)
	var flags byte
	if s.Shell {
		flags |= fgShellFlag
	}
	if s.UnreadKnown {
		flags |= fgUnreadFlag
	}
	b = append(b, byte(s.Kind), flags)
	b = binary.BigEndian.AppendUint32(b, s.Unread)
	b = binary.BigEndian.AppendUint32(b, s.Pgrp)
	b = binary.BigEndian.AppendUint32(b, s.Pid)
	b = append(b, byte(len(s.LeaderComm)))
	b = append(b, s.LeaderComm...)
	return w.flush(append(b, s.Comm...))
}

// ParseFgState decodes an fg-state payload:
//
//	id uint64, kind uint8 (0..3), flags uint8 (bit 0: shell, bit 1: unread
//	known; others zero),
//	unread uint32, pgrp uint32, pid uint32,
//	leader comm length uint8, leader comm, then comm (each UTF-8, at most MaxComm)
func ParseFgState(p []byte) (FgState, error) {
	if len(p) < 23 {
		return FgState{}, short(TypeFgState, p, 23)
	}
	s := FgState{
		ID: binary.BigEndian.Uint64(p), Kind: FgKind(p[8]), Shell: p[9]&fgShellFlag != 0, UnreadKnown: p[9]&fgUnreadFlag != 0,
		Unread: binary.BigEndian.Uint32(p[10:]), Pgrp: binary.BigEndian.Uint32(p[14:]), Pid: binary.BigEndian.Uint32(p[18:]),
	}
	if s.Kind > FgWaitingOnEvents {
		return FgState{}, fmt.Errorf("%w: fg-state kind %d out of range", ErrMalformed, s.Kind)
	}
	if p[9]&^(fgShellFlag|fgUnreadFlag) != 0 {
		return FgState{}, fmt.Errorf("%w: fg-state flags 0x%02x have reserved bits set", ErrMalformed, p[9])
	}
	n, rest := int(p[22]), p[23:]
	if n > len(rest) {
		return FgState{}, fmt.Errorf("%w: fg-state leader name of %d bytes in %d", ErrMalformed, n, len(rest))
	}
	leader, comm := rest[:n], rest[n:]
	for _, name := range [][]byte{leader, comm} {
		if len(name) > MaxComm || !utf8.Valid(name) {
			return FgState{}, fmt.Errorf("%w: fg-state process name must be UTF-8 of at most %d bytes", ErrMalformed, MaxComm)
		}
	}
	s.LeaderComm, s.Comm = string(leader), string(comm)
	return s, nil
}
