package sessiondir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The status record keeps how the session ended where a full disk cannot
// refuse it. meta.json is replaced by a new file, which needs free blocks;
// the status record is a file of StatusSize bytes that the holder writes
// whole when it starts, while it can, and afterwards only overwrites in
// place, which needs none. A holder that cannot write meta.json when its
// child exits still leaves the exit status there, and ReadMeta completes
// meta.json with it: a finished job is never taken for an interrupted one
// (and restored, which would run it again).

// StatusSize is the status record's size on disk: within one sector, so
// that an overwrite is one write to one block.
const StatusSize = 512

// ChildExit is how the child ended, recorded as soon as it is reaped
// while the holder still reads what processes it left behind print (they
// hold its terminal; Meta.Child). The session's end follows once they are
// done or the linger is over.
type ChildExit struct {
	At       time.Time `json:"at"`
	ExitCode int       `json:"exit_code"` // status, or 128+N for signal N
	Signal   int       `json:"signal,omitempty"`
}

// Status is the status record: which holder's run it describes (HolderPid
// and StartedAt, as in its meta.json) and the end fields of Meta.
type Status struct {
	HolderPid   int        `json:"holder_pid"`
	StartedAt   time.Time  `json:"started_at"`
	Child       *ChildExit `json:"child,omitempty"`
	ShutdownAt  *time.Time `json:"shutdown_at,omitempty"` // Meta.ShutdownAt
	EndedAt     *time.Time `json:"ended_at,omitempty"`
	ExitCode    *int       `json:"exit_code,omitempty"`
	Signal      int        `json:"signal,omitempty"`
	Closed      bool       `json:"closed,omitempty"`
	Interrupted bool       `json:"interrupted,omitempty"`
	Reason      string     `json:"reason,omitempty"`
	End         uint64     `json:"end,omitempty"`
}

// StatusOf is m's status record.
func StatusOf(m Meta) Status {
	return Status{
		HolderPid: m.HolderPid, StartedAt: m.StartedAt, Child: m.Child, ShutdownAt: m.ShutdownAt,
		EndedAt: m.EndedAt, ExitCode: m.ExitCode, Signal: m.Signal, Closed: m.Closed,
		Interrupted: m.Interrupted, Reason: m.Reason, End: m.End,
	}
}

// complete fills in what s knows of m's run and m does not: the status
// record of the same run (same holder pid and start) may be ahead of a
// meta.json whose last write failed.
func (s Status) complete(m *Meta) {
	if s.HolderPid != m.HolderPid || !s.StartedAt.Equal(m.StartedAt) {
		return // another run's record
	}
	if m.Child == nil {
		m.Child = s.Child
	}
	if m.ShutdownAt == nil {
		m.ShutdownAt = s.ShutdownAt
	}
	if m.EndedAt == nil && s.EndedAt != nil {
		m.EndedAt, m.ExitCode, m.Signal, m.Closed = s.EndedAt, s.ExitCode, s.Signal, s.Closed
		m.Interrupted, m.Reason, m.End = s.Interrupted, s.Reason, max(m.End, s.End)
	}
}

// statusMagic begins every status record: "<magic> <crc32 of the JSON, 8
// hex digits> <the JSON's length, decimal>\n<JSON>\n", then spaces up to
// StatusSize.
const statusMagic = "termkeep-status-1"

// ErrStatusDamaged is returned for a status record that is not one: torn by
// a crash in the middle of an overwrite, or never written.
var ErrStatusDamaged = errors.New("sessiondir: status record damaged")

// EncodeStatus returns s as a record of StatusSize bytes. A reason too long
// for the record is cut short (at a rune boundary): the status matters,
// the words can be read in meta.json.
func EncodeStatus(s Status) ([]byte, error) {
	for {
		js, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("sessiondir: encode status: %w", err)
		}
		head := fmt.Sprintf("%s %08x %d\n", statusMagic, crc32.ChecksumIEEE(js), len(js))
		if n := len(head) + len(js) + 1; n <= StatusSize {
			rec := make([]byte, 0, StatusSize)
			rec = append(append(append(rec, head...), js...), '\n')
			return append(rec, bytes.Repeat([]byte{' '}, StatusSize-n)...), nil
		} else if s.Reason == "" {
			return nil, fmt.Errorf("sessiondir: status needs %d bytes, more than %d", n, StatusSize)
		} else {
			r := []rune(s.Reason)
			s.Reason = string(r[:len(r)*3/4])
		}
	}
}

// DecodeStatus parses a record EncodeStatus made; anything else, a torn
// record included, is ErrStatusDamaged.
func DecodeStatus(b []byte) (Status, error) {
	var s Status
	head, rest, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return s, ErrStatusDamaged
	}
	f := bytes.Fields(head)
	if len(f) != 3 || string(f[0]) != statusMagic || len(f[1]) != 8 {
		return s, ErrStatusDamaged
	}
	sum, err1 := strconv.ParseUint(string(f[1]), 16, 32)
	n, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil || n < 0 || n > len(rest) {
		return s, ErrStatusDamaged
	}
	js := rest[:n]
	if crc32.ChecksumIEEE(js) != uint32(sum) || json.Unmarshal(js, &s) != nil {
		return s, ErrStatusDamaged
	}
	return s, nil
}

// ReadStatus reads dir's status record.
func ReadStatus(dir string) (Status, error) {
	f, err := os.Open(filepath.Join(dir, StatusFile))
	if err != nil {
		return Status{}, fmt.Errorf("sessiondir: read status: %w", err)
	}
	defer f.Close()
	b := make([]byte, StatusSize)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return Status{}, fmt.Errorf("sessiondir: read status: %w", err)
	}
	return DecodeStatus(b[:n])
}

// File is what a session's records are written through: an *os.File, or
// in tests one that fails as a full disk does.
type File interface {
	io.Writer
	io.WriterAt
	Sync() error
	Close() error
}

// Through makes the File a record is written through; nil writes the file
// itself.
type Through func(*os.File) File

func (t Through) file(f *os.File) File {
	if t == nil {
		return f
	}
	return t(f)
}

// StatusWriter overwrites one session's status record in place. It is not
// safe for concurrent use.
type StatusWriter struct {
	f File
}

// CreateStatus opens dir's status record for a new run and writes s to it
// with all its StatusSize bytes, which allocates the record's block now,
// while there is room: later writes overwrite it in place.
func CreateStatus(dir string, s Status, through Through) (*StatusWriter, error) {
	osf, err := os.OpenFile(filepath.Join(dir, StatusFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sessiondir: create status: %w", err)
	}
	w := &StatusWriter{f: through.file(osf)}
	if err := w.Write(s); err != nil {
		w.f.Close()
		return nil, err
	}
	return w, nil
}

// Write overwrites the record with s and makes it durable.
func (w *StatusWriter) Write(s Status) error {
	rec, err := EncodeStatus(s)
	if err != nil {
		return err
	}
	if _, err := w.f.WriteAt(rec, 0); err != nil {
		return fmt.Errorf("sessiondir: write status: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sessiondir: write status: %w", err)
	}
	return nil
}

// Close closes the record's file.
func (w *StatusWriter) Close() error { return w.f.Close() }
