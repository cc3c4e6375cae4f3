// Package wire is termkeep's framed protocol, spoken between a holder and the
// server and between the server and its clients (the CLI over the server's
// socket, the browser over WebSocket, web/src/wire.ts). One table of frame
// types serves every hop; docs/protocol.md is its human-readable form and
// must change together with this file.
//
// A frame is a 5-byte header followed by its payload:
//
//	type    uint8
//	length  uint32, big endian: payload length, at most MaxPayload
//	payload length bytes
//
// Frame types are numbered by direction: 0x01–0x3F travel toward the pty
// (client → server → holder), 0x40–0x7F travel away from it. Numbers are never
// reused once retired. A reader that meets an unknown type, a length above
// MaxPayload or a payload of the wrong shape reports an error; the peer answers
// with an Error frame and closes the connection.
//
// The package does no buffering of its own beyond one reusable frame buffer:
// callers decide whether a bufio.Reader sits in front of a socket.
package wire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// Version is the protocol version carried in Hello and Welcome. A peer accepts
// any version from MinVersion to Version; frames added in a later version are
// only sent to peers that announced it.
//
// Version 2 adds the name frame (server → holder) and the log frame (holder
// → server → viewer); holders of the first version may not know the cwd
// frame either (HolderAccepts). Version 3 adds no frame; its holders record
// SIGTERM as "interrupted" (Exit's state) and close their session on
// purpose on SIGUSR1 (holder.CloseSignal), where earlier ones close on
// SIGTERM. Version 4 adds the linger frame (holder → server). Version 5
// adds the shutdown frame (server → holder) and its answer, the prepared
// frame (holder → server). Version 6 adds the fit frame (viewer → server)
// and Hello's fit, ignore_size and name: a viewer of version 6 takes the
// session's size only by typing or fitting, and its resize frames report
// its window's size; an older viewer's resizes still take the size.
// Version 7 adds the lane frames: lane and lane-off (server → holder),
// lane-end (holder → server); and the term-mode frame (holder → server →
// viewer). Version 8 lets a viewer take part in a lane: the same lane
// frames between viewer and server, and lane-written (server → viewer;
// lane.go). A holder has nothing new in it. Version 9 adds the input lane
// (lanein.go): lane-read (server → holder), lane-in (viewer ↔ server),
// lane-input (holder → server → viewer) and lane-typed (holder → server).
// Version 10 adds lane claims (laneclaim.go): the lane frame's token,
// Hello's lane_token and claim, lane-claim (server → holder) and
// lane-claimed (holder → server); and signal-fg (server → holder).
// Version 11 adds the foreground's state as the kernel says it
// (fgstate.go): fg-query (server → holder) and fg-state (holder →
// server).
const (
	Version    = 11
	MinVersion = 1
)

// MaxPayload bounds every frame's payload. Output is chunked below it.
const MaxPayload = 1 << 20

// MaxOutputData is the largest data slice one Output frame carries.
const MaxOutputData = MaxPayload - 8

// HeaderSize is the size of a frame header.
const HeaderSize = 5

// Type is a frame type.
type Type uint8

// Frames toward the pty (client → server, server → holder).
const (
	TypeHello  Type = 0x01 // JSON Hello: first frame of every connection
	TypeInput  Type = 0x02 // raw bytes to write to the pty
	TypeResize Type = 0x03 // cols uint16, rows uint16
	TypeSignal Type = 0x04 // signal number uint8, sent to the child's process group
	TypeClose  Type = 0x05 // grace milliseconds uint32: SIGHUP, then SIGKILL after grace
	TypeAck    Type = 0x06 // offset uint64: the viewer has drawn everything below it
	TypePing   Type = 0x07 // opaque uint64, answered by Pong
	TypeAnswer Type = 0x08 // the ServerPing's uint64: the client is alive
	TypeCwd    Type = 0x09 // server → holder, version 2: the session's working directory, UTF-8, for meta.json
	TypeName   Type = 0x0a // server → holder, version 2: the session's name, UTF-8 ("" = none), for meta.json
	// TypeShutdown is one byte, server → holder, version 5: 1, the machine
	// is shutting down (logind's PrepareForShutdown): sync the log and
	// record in meta.json that the coming end is the shutdown's; 0, the
	// shutdown was cancelled. The holder answers with TypePrepared.
	TypeShutdown Type = 0x0b
	// TypeFit is cols uint16, rows uint16, viewer → server, version 6: take
	// the session's size at this one (the policy permitting). A resize
	// frame from a version 6 viewer only reports its window's size.
	TypeFit Type = 0x0c
	// TypeLane is an offset uint64, server → holder, version 7, sent
	// with one file descriptor (SCM_RIGHTS) of a non-blocking terminal:
	// from that offset on, the holder writes the output it logs to that
	// terminal too (docs/architecture.md, Lanes). Every lane
	// is answered by exactly one TypeLaneEnd.
	TypeLane Type = 0x0d
	// TypeLaneOff (no payload), server → holder, version 7: end the lane.
	TypeLaneOff Type = 0x0e
	// TypeSignalFg is a signal number uint8, server → holder, version 10:
	// sent to the pty's foreground process group only (the command a
	// shell runs), never to the session's own program, which a signal
	// frame also reaches.
	TypeSignalFg Type = 0x12
)

// holderSince is the protocol version from which a holder accepts each
// frame from a server. The cwd frame came after the first release without
// a version of its own: some version 1 holders know it and some refuse it
// (and hang up), and a welcome cannot tell them apart, so only version 2
// holders, which all know it, are sent it.
var holderSince = map[Type]int{
	TypeInput: 1, TypeResize: 1, TypeSignal: 1, TypeClose: 1, TypeAck: 1, TypePing: 1,
	TypeCwd: 2, TypeName: 2, TypeShutdown: 5, TypeLane: 7, TypeLaneOff: 7, TypeLaneRead: 9, TypeLaneClaim: 10, TypeSignalFg: 10,
	TypeFgQuery: 11,
}

// HolderAccepts reports whether a holder that announced version (in its
// Welcome) accepts a frame of type t from a server. A holder refuses any
// other frame and ends the connection.
func HolderAccepts(version int, t Type) bool {
	since, ok := holderSince[t]
	return ok && version >= since
}

// Frames away from the pty (holder → server, server → client).
const (
	TypeWelcome Type = 0x41 // JSON Welcome: answer to Hello
	TypeOutput  Type = 0x42 // offset uint64, then data: the bytes at [offset, offset+len(data))
	TypeResized Type = 0x43 // offset uint64, cols uint16, rows uint16: size in force from offset
	TypeExit    Type = 0x44 // JSON Exit: the session ended; the last frame of the stream
	TypeError   Type = 0x45 // code uint16, then a UTF-8 message
	TypePong    Type = 0x46 // the Ping's uint64
	TypeGap     Type = 0x47 // from uint64, to uint64: bytes [from, to) are no longer retained
	// TypeSnapshot carries a screen snapshot valid at an offset: offset
	// uint64, then part of the snapshot's bytes. A long snapshot is split
	// over consecutive frames with the same offset; output frames from that
	// offset follow the last part.
	TypeSnapshot Type = 0x48
	// TypeViewers is JSON Viewers: who is attached and who sets the size.
	TypeViewers Type = 0x49
	// TypeServerPing is an opaque uint64 the client answers with an Answer
	// frame; a client that stops answering is dropped.
	TypeServerPing Type = 0x4a
	// TypeLog is JSON LogState: whether the session's output is being kept
	// on disk. Holder → server and server → viewer, on every change (and
	// at connect while the log is stopped).
	TypeLog Type = 0x4b
	// TypeLinger is JSON Linger: the child exited, and the holder reads on
	// while processes it left behind hold the terminal. Holder → server,
	// version 4, once; the Exit frame follows when the holder is done.
	TypeLinger Type = 0x4c
	// TypePrepared answers a Shutdown frame with its byte, once the
	// holder has done what it asked. Holder → server, version 5.
	TypePrepared Type = 0x4d
	// TypeLaneEnd is an offset uint64, holder → server, version 7: the
	// lane opened last has ended, having written to its terminal every
	// byte from its start below this offset and none at or above it. It
	// is sent only once the output before it has been.
	TypeLaneEnd Type = 0x4e
)

var typeNames = map[Type]string{
	TypeHello: "hello", TypeInput: "input", TypeResize: "resize", TypeSignal: "signal",
	TypeClose: "close", TypeAck: "ack", TypePing: "ping",
	TypeWelcome: "welcome", TypeOutput: "output", TypeResized: "resized", TypeExit: "exit",
	TypeError: "error", TypePong: "pong", TypeGap: "gap", TypeSnapshot: "snapshot",
	TypeViewers: "viewers", TypeServerPing: "server-ping", TypeAnswer: "answer", TypeCwd: "cwd",
	TypeLog: "log", TypeName: "name", TypeLinger: "linger", TypeFit: "fit",
	TypeShutdown: "shutdown", TypePrepared: "prepared", TypeTermMode: "term-mode",
	TypeLane: "lane", TypeLaneOff: "lane-off", TypeLaneEnd: "lane-end", TypeLaneWritten: "lane-written",
	TypeLaneRead: "lane-read", TypeLaneIn: "lane-in", TypeLaneInput: "lane-input", TypeLaneTyped: "lane-typed",
	TypeLaneClaim: "lane-claim", TypeLaneClaimed: "lane-claimed", TypeSignalFg: "signal-fg",
	TypeFgQuery: "fg-query", TypeFgState: "fg-state",
}

func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type(0x%02x)", uint8(t))
}

// Known reports whether t is a frame type of this protocol version.
func (t Type) Known() bool { _, ok := typeNames[t]; return ok }

// Errors returned by ReadFrame and the payload parsers. They wrap ErrMalformed
// so callers can tell a bad peer from a broken connection.
var (
	ErrMalformed   = errors.New("wire: malformed frame")
	ErrTooLarge    = fmt.Errorf("%w: payload larger than %d bytes", ErrMalformed, MaxPayload)
	ErrUnknownType = fmt.Errorf("%w: unknown frame type", ErrMalformed)
)

// Error codes carried by Error frames.
const (
	CodeMalformed   uint16 = 1 // the peer sent a frame this side cannot decode
	CodeVersion     uint16 = 2 // no protocol version in common
	CodeNotFound    uint16 = 3 // no such session
	CodeUnavailable uint16 = 4 // the session cannot serve this request now
	CodeForbidden   uint16 = 5 // the peer may not do this
	CodeInternal    uint16 = 6
	CodeTooFast     uint16 = 7 // the peer sends faster than allowed: its frames are slowed down, not dropped
	CodeDetached    uint16 = 8 // another client's attach -d detached this viewer: it should not reconnect
)

// Frame is one decoded frame. Payload aliases the reader's buffer and is valid
// only until the next call to ReadFrame with the same buffer.
type Frame struct {
	Type    Type
	Payload []byte
}

// ReadFrame reads one frame from r. buf is reused for the payload when it is
// large enough; the returned Frame's Payload aliases it. A connection cut in
// the middle of a frame yields io.ErrUnexpectedEOF; a clean end between frames
// yields io.EOF. Unknown types and oversized lengths yield errors wrapping
// ErrMalformed before any payload is read, so a hostile length never causes an
// allocation.
func ReadFrame(r io.Reader, buf *[]byte) (Frame, error) {
	var hdr [HeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Frame{}, err
	}
	t := Type(hdr[0])
	n := binary.BigEndian.Uint32(hdr[1:])
	if !t.Known() {
		return Frame{}, fmt.Errorf("%w 0x%02x", ErrUnknownType, uint8(t))
	}
	if n > MaxPayload {
		return Frame{}, ErrTooLarge
	}
	if cap(*buf) < int(n) {
		*buf = make([]byte, n, max(int(n), 4096))
	}
	p := (*buf)[:n]
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, err
	}
	return Frame{Type: t, Payload: p}, nil
}

// Writer encodes frames onto an io.Writer, each with a single Write call so a
// frame is never interleaved with another writer's bytes when the underlying
// writer is safe for concurrent use. Writer itself is not safe for concurrent
// use. Its first error is sticky: every later call returns it.
type Writer struct {
	w   io.Writer
	buf []byte
	err error
}

// NewWriter returns a Writer that writes frames to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Err returns the first write error, if any.
func (w *Writer) Err() error { return w.err }

// begin resets the buffer to a header for type t with room for n payload bytes.
func (w *Writer) begin(t Type, n int) []byte {
	if cap(w.buf) < HeaderSize+n {
		w.buf = make([]byte, 0, max(HeaderSize+n, 512))
	}
	b := w.buf[:HeaderSize]
	b[0] = byte(t)
	binary.BigEndian.PutUint32(b[1:], uint32(n))
	return b
}

func (w *Writer) flush(b []byte) error {
	if w.err != nil {
		return w.err
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = err
	}
	w.buf = b[:0]
	return w.err
}

// Frame writes a frame of type t with payload p.
func (w *Writer) Frame(t Type, p []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(p) > MaxPayload {
		return fmt.Errorf("wire: %s payload of %d bytes exceeds %d", t, len(p), MaxPayload)
	}
	return w.flush(append(w.begin(t, len(p)), p...))
}

// Output writes one or more Output frames carrying data, the bytes at
// [off, off+len(data)). Data longer than MaxOutputData is split.
func (w *Writer) Output(off uint64, data []byte) error {
	for {
		n := min(len(data), MaxOutputData)
		b := w.begin(TypeOutput, 8+n)
		b = binary.BigEndian.AppendUint64(b, off)
		b = append(b, data[:n]...)
		if err := w.flush(b); err != nil {
			return err
		}
		data = data[n:]
		off += uint64(n)
		if len(data) == 0 {
			return nil
		}
	}
}

// OutputHeaderSize is the room an Output frame's header and offset take in
// front of its data: a caller that reads data into a buffer at this offset
// can send it with OutputInPlace, without a copy.
const OutputHeaderSize = HeaderSize + 8

// OutputInPlace writes one Output frame whose data is already in
// frame[OutputHeaderSize:], the bytes at [off, off+len(data)); it fills in
// the header in front of the data. The data must not exceed MaxOutputData.
func (w *Writer) OutputInPlace(off uint64, frame []byte) error {
	n := len(frame) - OutputHeaderSize
	if n < 0 || n > MaxOutputData {
		return fmt.Errorf("wire: an output frame of %d bytes: the data must be 0..%d bytes after a %d-byte header", len(frame), MaxOutputData, OutputHeaderSize)
	}
	if w.err != nil {
		return w.err
	}
	frame[0] = byte(TypeOutput)
	binary.BigEndian.PutUint32(frame[1:], uint32(8+n))
	binary.BigEndian.PutUint64(frame[HeaderSize:], off)
	if _, err := w.w.Write(frame); err != nil {
		w.err = err
	}
	return w.err
}

// OutputParts writes one Output frame whose data is the concatenation of
// parts, the bytes at [off, off+total). The total must not exceed
// MaxOutputData.
func (w *Writer) OutputParts(off uint64, parts [][]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n > MaxOutputData {
		return fmt.Errorf("wire: output of %d bytes exceeds %d", n, MaxOutputData)
	}
	b := w.begin(TypeOutput, 8+n)
	b = binary.BigEndian.AppendUint64(b, off)
	for _, p := range parts {
		b = append(b, p...)
	}
	return w.flush(b)
}

// Snapshot writes a screen snapshot valid at off, split over as many
// Snapshot frames as it needs.
func (w *Writer) Snapshot(off uint64, data []byte) error {
	for first := true; first || len(data) > 0; first = false {
		n := min(len(data), MaxOutputData)
		b := w.begin(TypeSnapshot, 8+n)
		b = binary.BigEndian.AppendUint64(b, off)
		b = append(b, data[:n]...)
		if err := w.flush(b); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// Input writes an Input frame, splitting data above MaxPayload.
func (w *Writer) Input(data []byte) error {
	for len(data) > 0 {
		n := min(len(data), MaxPayload)
		if err := w.Frame(TypeInput, data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return w.err
}

// Resize writes a Resize frame.
func (w *Writer) Resize(cols, rows uint16) error {
	b := w.begin(TypeResize, 4)
	b = binary.BigEndian.AppendUint16(b, cols)
	b = binary.BigEndian.AppendUint16(b, rows)
	return w.flush(b)
}

// Fit writes a Fit frame.
func (w *Writer) Fit(cols, rows uint16) error {
	b := w.begin(TypeFit, 4)
	b = binary.BigEndian.AppendUint16(b, cols)
	b = binary.BigEndian.AppendUint16(b, rows)
	return w.flush(b)
}

// Resized writes a Resized frame.
func (w *Writer) Resized(off uint64, cols, rows uint16) error {
	b := w.begin(TypeResized, 12)
	b = binary.BigEndian.AppendUint64(b, off)
	b = binary.BigEndian.AppendUint16(b, cols)
	b = binary.BigEndian.AppendUint16(b, rows)
	return w.flush(b)
}

// Signal writes a Signal frame.
func (w *Writer) Signal(sig uint8) error {
	return w.flush(append(w.begin(TypeSignal, 1), sig))
}

// SignalFg writes a signal-fg frame.
func (w *Writer) SignalFg(sig uint8) error {
	return w.flush(append(w.begin(TypeSignalFg, 1), sig))
}

// Close writes a Close frame asking for the session to end with the given
// grace period, in milliseconds, between SIGHUP and SIGKILL.
func (w *Writer) Close(graceMillis uint32) error {
	return w.flush(binary.BigEndian.AppendUint32(w.begin(TypeClose, 4), graceMillis))
}

// Uint64 writes a frame whose payload is a single uint64 (Ack, Ping, Pong).
func (w *Writer) Uint64(t Type, v uint64) error {
	return w.flush(binary.BigEndian.AppendUint64(w.begin(t, 8), v))
}

// Shutdown writes a Shutdown or Prepared frame (t): whether a shutdown
// is coming (on) or was cancelled.
func (w *Writer) Shutdown(t Type, on bool) error {
	var v byte
	if on {
		v = 1
	}
	return w.flush(append(w.begin(t, 1), v))
}

// Gap writes a Gap frame: bytes [from, to) are no longer retained.
func (w *Writer) Gap(from, to uint64) error {
	b := w.begin(TypeGap, 16)
	b = binary.BigEndian.AppendUint64(b, from)
	b = binary.BigEndian.AppendUint64(b, to)
	return w.flush(b)
}

// Error writes an Error frame.
func (w *Writer) Error(code uint16, msg string) error {
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	msg = string([]rune(msg)) // force valid UTF-8
	b := w.begin(TypeError, 2+len(msg))
	b = binary.BigEndian.AppendUint16(b, code)
	b = append(b, msg...)
	return w.flush(b)
}

// JSON writes a frame whose payload is v encoded as JSON (Hello, Welcome, Exit).
func (w *Writer) JSON(t Type, v any) error {
	p, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("wire: encode %s: %w", t, err)
	}
	return w.Frame(t, p)
}

// Roles a Hello can announce.
const (
	RoleServer = "server" // the server, connecting to a holder
	RoleViewer = "viewer" // a client that watches and may type
	RoleWaiter = "waiter" // a client that only reads output and the exit (wait, capture)
)

// Special values of Hello.From.
const (
	// FromEnd asks for live output only: no backlog, no snapshot.
	FromEnd int64 = -1
	// FromSnapshot asks for a fresh viewer's start: a snapshot of the
	// screen as it is now, then live output.
	FromSnapshot int64 = -2
)

// How a stream begins, in Welcome.Resume.
const (
	ResumeBytes    = "bytes"    // output from the offset asked for
	ResumeSnapshot = "snapshot" // a snapshot, then output from its offset
	ResumeLive     = "live"     // live output only
)

// Hello opens every connection toward the pty.
type Hello struct {
	Version int    `json:"version"`
	Role    string `json:"role"`
	// Session is the session id or name (client → server); a holder ignores it.
	Session string `json:"session,omitempty"`
	// From is the offset of the first byte wanted: everything from it is
	// sent. FromEnd asks for live output only, FromSnapshot for a snapshot
	// then live output. A viewer's offset below the oldest retained byte is
	// answered with a snapshot; a waiter's (or the server's, to a holder)
	// with a Gap frame and output from the oldest retained byte.
	From int64 `json:"from"`
	// Scrollback is how many lines of history a snapshot should carry
	// above the screen.
	Scrollback int `json:"scrollback,omitempty"`
	// Cols and Rows, when non-zero, are the viewer's size, applied on attach.
	Cols uint16 `json:"cols,omitempty"`
	Rows uint16 `json:"rows,omitempty"`
	// ReadOnly asks to watch only: the viewer's input and resizes are refused.
	ReadOnly bool `json:"read_only,omitempty"`
	// DetachOthers asks the server to detach the session's other terminal
	// (CLI) viewers, as tmux's attach -d does; they are told with an Error
	// frame of CodeDetached.
	DetachOthers bool `json:"detach_others,omitempty"`
	// Fit (version 6) takes the session's size at Cols x Rows on arrival,
	// as a Fit frame would; without it the size is only reported.
	Fit bool `json:"fit,omitempty"`
	// IgnoreSize (version 6): the viewer never bears on the session's
	// size, under any policy (attach --ignore-size).
	IgnoreSize bool `json:"ignore_size,omitempty"`
	// Name (version 6) is how the viewer is shown to the others ("Pixel
	// phone", "attach /dev/pts/3"); the server keeps at most MaxViewerName
	// bytes of it, printable characters only.
	Name string `json:"name,omitempty"`
	// ScreenFirst asks for a snapshot's screen before its history: a
	// snapshot without history, then, when Scrollback asks for some, a
	// second Snapshot frame that draws it and the screen again as
	// screen.SnapshotKeep does (attach: the screen is what its user
	// waits for, the history goes into the terminal's scrollback). A
	// server that does not know it sends one snapshot with the history.
	ScreenFirst bool `json:"screen_first,omitempty"`
	// LaneToken (version 10) names the lanes opened for this connection
	// (laneclaim.go): a random number, new for each connection.
	LaneToken uint64 `json:"lane_token,omitempty"`
	// Claim (version 10) is the LaneToken of an earlier connection that
	// was lost while a lane may have written to the viewer's terminal:
	// the stream starts at that lane's end, or From if it is further, the
	// bytes from From below it sent as lane-written. Only with From >= 0.
	Claim uint64 `json:"claim,omitempty"`
}

// MaxViewerName bounds a viewer's name as the server keeps it.
const MaxViewerName = 64

// LogState says whether a session's output is being logged. While the log
// cannot write (a full disk, a failing file system), Stopped is set with the
// offset it stopped at and why: the session runs on and viewers still get
// every byte, but the bytes from At on are not on disk. A LogState with
// Stopped false says logging resumed; what went by in between is a gap in
// the log (its offsets are kept, its bytes are not).
type LogState struct {
	Stopped bool   `json:"stopped"`
	At      uint64 `json:"at,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Linger says the session's child exited (ExitCode, Signal as in Exit) at
// offset At, and that the holder reads the output of the processes it left
// behind until no process holds the terminal or Until.
type Linger struct {
	ExitCode int       `json:"exit_code"`
	Signal   int       `json:"signal,omitempty"`
	At       uint64    `json:"at"`
	Until    time.Time `json:"until"`
}

// Welcome answers a Hello.
type Welcome struct {
	Version int    `json:"version"`
	Session string `json:"session,omitempty"`
	Name    string `json:"name,omitempty"`
	Pid     int    `json:"pid"`
	// First is the oldest retained offset, End the offset after the last byte
	// logged at the time of the Welcome; Start is where this stream begins.
	First uint64 `json:"first"`
	End   uint64 `json:"end"`
	Start uint64 `json:"start"`
	Cols  uint16 `json:"cols"`
	Rows  uint16 `json:"rows"`
	// Exited is set when the session has already ended; an Exit frame follows
	// the backlog.
	Exited bool `json:"exited,omitempty"`
	// Resume says how the stream begins: ResumeBytes, ResumeSnapshot or
	// ResumeLive.
	Resume string `json:"resume,omitempty"`
}

// Exit is the last frame of a stream: the session ended.
type Exit struct {
	// State is the session's final state: "exited", "closed" or "interrupted".
	State string `json:"state"`
	// ExitCode is the child's status as a shell reports it: the exit status,
	// or 128+N for a child killed by signal N. Nil when unknown.
	ExitCode *int `json:"exit_code"`
	Signal   int  `json:"signal,omitempty"`
	// End is the offset after the last byte the session produced.
	End    uint64 `json:"end"`
	Reason string `json:"reason,omitempty"`
	// Cause is why an interrupted session ended, when its holder knows
	// ("stopped": a SIGTERM from outside termkeep; "shutdown": one after
	// a shutdown frame); the server judges it
	// with the boot the holder started in (server/restorepolicy).
	Cause string `json:"cause,omitempty"`
}

// CauseStopped is the Cause of a holder stopped by a SIGTERM from outside
// termkeep (the machine or the service stopping).
const CauseStopped = "stopped"

// CauseShutdown is the Cause of a holder stopped after the server told it
// the machine is shutting down (a shutdown frame).
const CauseShutdown = "shutdown"

// Viewers tells a viewer who is attached to the session and who sets its
// size. It is sent when a viewer arrives, leaves or the size changes.
type Viewers struct {
	Viewers []ViewerInfo `json:"viewers"`
	// SizeOwner is the id of the viewer whose size the session follows (0:
	// none, e.g. under the smallest policy or with no writable viewer).
	SizeOwner int    `json:"size_owner"`
	Cols      uint16 `json:"cols"`
	Rows      uint16 `json:"rows"`
	// You is the id of the viewer receiving the frame.
	You int `json:"you"`
	// SizePolicy is the session's size policy: latest, smallest, largest
	// or fixed (version 6).
	SizePolicy string `json:"size_policy,omitempty"`
	// HolderUnresponsive says that the session's holder does not answer
	// the server: input waits, and may fail, until it does.
	HolderUnresponsive bool `json:"holder_unresponsive,omitempty"`
}

// ViewerKind is which client a viewer is, as the Viewers frame, the API
// and the events name it.
type ViewerKind string

const (
	ViewerCLI   ViewerKind = "cli"   // a terminal: termkeep attach, wait, the API's streams
	ViewerWeb   ViewerKind = "web"   // a browser's page
	ViewerShare ViewerKind = "share" // a share link's page
)

// ViewerInfo describes one attached viewer.
type ViewerInfo struct {
	ID   int        `json:"id"`
	Kind ViewerKind `json:"kind"`
	// Name is what it calls itself, or a share link's name (version 6).
	Name     string `json:"name,omitempty"`
	ReadOnly bool   `json:"read_only,omitempty"`
	// IgnoreSize: it never bears on the size (version 6).
	IgnoreSize bool   `json:"ignore_size,omitempty"`
	Cols       uint16 `json:"cols,omitempty"`
	Rows       uint16 `json:"rows,omitempty"`
}

// ParseJSON decodes a JSON payload into v, rejecting trailing data.
func ParseJSON(p []byte, v any) error {
	if !utf8.Valid(p) {
		return fmt.Errorf("%w: payload is not UTF-8", ErrMalformed)
	}
	if err := json.Unmarshal(p, v); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return nil
}

func short(t Type, p []byte, want int) error {
	return fmt.Errorf("%w: %s payload is %d bytes, want %d", ErrMalformed, t, len(p), want)
}

// ParseShutdown reads a Shutdown or Prepared payload: whether a shutdown
// is coming (1) or was cancelled (0).
func ParseShutdown(p []byte) (bool, error) {
	if len(p) != 1 || p[0] > 1 {
		return false, fmt.Errorf("%w: a shutdown payload is one byte, 0 or 1", ErrMalformed)
	}
	return p[0] == 1, nil
}

// ParseOutput splits an Output payload. data aliases p.
func ParseOutput(p []byte) (off uint64, data []byte, err error) {
	if len(p) < 8 {
		return 0, nil, short(TypeOutput, p, 8)
	}
	off = binary.BigEndian.Uint64(p)
	if off > 1<<62 {
		return 0, nil, fmt.Errorf("%w: output offset %d out of range", ErrMalformed, off)
	}
	return off, p[8:], nil
}

// ParseResize decodes a Resize payload. Sizes must be within 1..MaxDim.
func ParseResize(p []byte) (cols, rows uint16, err error) {
	if len(p) != 4 {
		return 0, 0, short(TypeResize, p, 4)
	}
	cols, rows = binary.BigEndian.Uint16(p), binary.BigEndian.Uint16(p[2:])
	if err := CheckSize(cols, rows); err != nil {
		return 0, 0, err
	}
	return cols, rows, nil
}

// MaxDim bounds a terminal's columns and rows: every size termkeep accepts,
// from a viewer, a create request or a holder, is 1..MaxDim each. A larger
// terminal costs memory and snapshot time out of proportion to any use.
const MaxDim = 1000

// CheckSize reports whether cols x rows is a size termkeep accepts.
func CheckSize(cols, rows uint16) error {
	if cols < 1 || rows < 1 || cols > MaxDim || rows > MaxDim {
		return fmt.Errorf("%w: size %dx%d out of range 1..%d", ErrMalformed, cols, rows, MaxDim)
	}
	return nil
}

// ParseResized decodes a Resized payload.
func ParseResized(p []byte) (off uint64, cols, rows uint16, err error) {
	if len(p) != 12 {
		return 0, 0, 0, short(TypeResized, p, 12)
	}
	off = binary.BigEndian.Uint64(p)
	cols, rows, err = ParseResize(p[8:])
	return off, cols, rows, err
}

// ParseSignal decodes a Signal payload. Only signals 1..31 are accepted.
func ParseSignal(p []byte) (uint8, error) {
	if len(p) != 1 {
		return 0, short(TypeSignal, p, 1)
	}
	if p[0] < 1 || p[0] > 31 {
		return 0, fmt.Errorf("%w: signal %d out of range", ErrMalformed, p[0])
	}
	return p[0], nil
}

// ParseClose decodes a Close payload: the grace period in milliseconds.
func ParseClose(p []byte) (uint32, error) {
	if len(p) != 4 {
		return 0, short(TypeClose, p, 4)
	}
	return binary.BigEndian.Uint32(p), nil
}

// ParseUint64 decodes an Ack, Ping or Pong payload.
func ParseUint64(t Type, p []byte) (uint64, error) {
	if len(p) != 8 {
		return 0, short(t, p, 8)
	}
	return binary.BigEndian.Uint64(p), nil
}

// ParseGap decodes a Gap payload.
func ParseGap(p []byte) (from, to uint64, err error) {
	if len(p) != 16 {
		return 0, 0, short(TypeGap, p, 16)
	}
	from, to = binary.BigEndian.Uint64(p), binary.BigEndian.Uint64(p[8:])
	if to < from {
		return 0, 0, fmt.Errorf("%w: gap [%d, %d) is reversed", ErrMalformed, from, to)
	}
	return from, to, nil
}

// ParseError decodes an Error payload.
func ParseError(p []byte) (code uint16, msg string, err error) {
	if len(p) < 2 {
		return 0, "", short(TypeError, p, 2)
	}
	return binary.BigEndian.Uint16(p), string(p[2:]), nil
}

// RemoteError is an Error frame received from the peer.
type RemoteError struct {
	Code    uint16
	Message string
}

func (e *RemoteError) Error() string { return e.Message }

// Validate checks that a frame's payload has the shape its type requires,
// without interpreting JSON payloads beyond checking they decode. It is what a
// peer runs on every frame it receives before acting on it.
func Validate(f Frame) error {
	var err error
	switch f.Type {
	case TypeInput:
	case TypeCwd:
		if len(f.Payload) > 4096 || !utf8.Valid(f.Payload) {
			err = fmt.Errorf("%w: cwd must be UTF-8 of at most 4096 bytes", ErrMalformed)
		}
	case TypeName:
		if len(f.Payload) > 256 || !utf8.Valid(f.Payload) {
			err = fmt.Errorf("%w: name must be UTF-8 of at most 256 bytes", ErrMalformed)
		}
	case TypeResize, TypeFit:
		_, _, err = ParseResize(f.Payload)
	case TypeSignal, TypeSignalFg:
		_, err = ParseSignal(f.Payload)
	case TypeClose:
		_, err = ParseClose(f.Payload)
	case TypeAck, TypePing, TypePong, TypeServerPing, TypeAnswer, TypeLaneEnd, TypeLaneTyped, TypeLaneClaim, TypeFgQuery:
		_, err = ParseUint64(f.Type, f.Payload)
	case TypeLane:
		_, _, err = ParseLane(f.Payload)
	case TypeLaneClaimed:
		_, _, _, err = ParseLaneClaimed(f.Payload)
	case TypeFgState:
		_, err = ParseFgState(f.Payload)
	case TypeLaneRead:
		_, err = ParseLaneRead(f.Payload)
	case TypeLaneInput:
		if len(f.Payload) == 0 {
			err = short(f.Type, f.Payload, 1)
		}
	case TypeLaneOff, TypeLaneIn:
		if len(f.Payload) != 0 {
			err = short(f.Type, f.Payload, 0)
		}
	case TypeOutput:
		_, _, err = ParseOutput(f.Payload)
	case TypeResized:
		_, _, _, err = ParseResized(f.Payload)
	case TypeGap:
		_, _, err = ParseGap(f.Payload)
	case TypeSnapshot, TypeLaneWritten:
		_, _, err = ParseOutput(f.Payload)
	case TypeError:
		_, _, err = ParseError(f.Payload)
	case TypeHello:
		var h Hello
		err = ParseJSON(f.Payload, &h)
	case TypeWelcome:
		var w Welcome
		err = ParseJSON(f.Payload, &w)
	case TypeExit:
		var e Exit
		err = ParseJSON(f.Payload, &e)
	case TypeViewers:
		var v Viewers
		err = ParseJSON(f.Payload, &v)
	case TypeLog:
		var l LogState
		err = ParseJSON(f.Payload, &l)
	case TypeLinger:
		var l Linger
		err = ParseJSON(f.Payload, &l)
	case TypeShutdown, TypePrepared:
		_, err = ParseShutdown(f.Payload)
	case TypeTermMode:
		_, err = ParseTermMode(f.Payload)
	default:
		err = fmt.Errorf("%w 0x%02x", ErrUnknownType, uint8(f.Type))
	}
	return err
}
