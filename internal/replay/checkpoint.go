package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"termkeep/internal/atomicfile"
	"termkeep/internal/screen"
)

// A checkpoint file holds a screen model at an offset of the output:
// magic, offset, length, the model (screen.Screen.MarshalBinary), and a
// CRC-32C of everything before it. The server's screen model keeps one
// (screen.ckpt) to start from after a restart; replay keeps a series of
// them (Dir) to start renders from. A torn or damaged file is not used:
// the log rebuilds what it held.
var ckptMagic = [8]byte{'T', 'K', 'S', 'C', 'R', 'N', '0', '1'}

const ckptHeader = len(ckptMagic) + 16 // magic, offset, length

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCheckpoint is wrapped by the errors of a checkpoint that cannot be
// read back.
var ErrCheckpoint = errors.New("replay: bad checkpoint")

// EncodeCheckpoint returns the checkpoint file of model (the screen's
// MarshalBinary) at offset off.
func EncodeCheckpoint(off uint64, model []byte) []byte {
	return appendCheckpoint(make([]byte, 0, ckptHeader+len(model)+4), off,
		func(b []byte) []byte { return append(b, model...) })
}

// AppendCheckpoint appends the checkpoint file of scr at offset off to b:
// what EncodeCheckpoint makes of scr's MarshalBinary, without a copy of
// the model.
func AppendCheckpoint(b []byte, off uint64, scr *screen.Screen) []byte {
	return appendCheckpoint(b, off, func(b []byte) []byte {
		b, _ = scr.AppendBinary(b)
		return b
	})
}

// appendCheckpoint appends a checkpoint file at offset off to b, its model
// appended by model.
func appendCheckpoint(b []byte, off uint64, model func([]byte) []byte) []byte {
	start := len(b)
	b = append(b, ckptMagic[:]...)
	b = binary.BigEndian.AppendUint64(b, off)
	b = binary.BigEndian.AppendUint64(b, 0) // the model's length, once it is known
	b = model(b)
	binary.BigEndian.PutUint64(b[start+16:], uint64(len(b)-start-ckptHeader))
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// DecodeCheckpoint reads a checkpoint file back. It rejects anything that
// is not a whole, valid one (an error wrapping ErrCheckpoint) and never
// panics.
func DecodeCheckpoint(b []byte) (*screen.Screen, uint64, error) {
	if len(b) < ckptHeader+4 || [8]byte(b[:8]) != ckptMagic {
		return nil, 0, fmt.Errorf("%w: no valid header", ErrCheckpoint)
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, 0, fmt.Errorf("%w: checksum mismatch", ErrCheckpoint)
	}
	off := binary.BigEndian.Uint64(b[8:])
	if n := binary.BigEndian.Uint64(b[16:]); n != uint64(len(body)-ckptHeader) {
		return nil, 0, fmt.Errorf("%w: length %d does not match its file", ErrCheckpoint, n)
	}
	scr := screen.New(80, 24, screen.Options{})
	if err := scr.UnmarshalBinary(body[ckptHeader:]); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return scr, off, nil
}

// WriteCheckpoint replaces the checkpoint file at path (by a rename, so a
// reader sees the old file or the new one). It does not fsync: a
// checkpoint lost to a crash is rebuilt from the log.
func WriteCheckpoint(path string, off uint64, model []byte) error {
	return WriteCheckpointFile(path, EncodeCheckpoint(off, model))
}

// WriteCheckpointFile is WriteCheckpoint of a whole checkpoint file
// (EncodeCheckpoint, AppendCheckpoint).
func WriteCheckpointFile(path string, file []byte) error {
	return atomicfile.Write(path, file, false)
}

// ReadCheckpoint reads the checkpoint file at path.
func ReadCheckpoint(path string) (*screen.Screen, uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	return DecodeCheckpoint(b)
}

// CheckpointOffset returns the offset of the checkpoint file at path from
// its header alone: what a caller deciding whether to read the file needs.
// The model is neither read nor checked (ReadCheckpoint does that).
func CheckpointOffset(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var hdr [ckptHeader]byte
	n, _ := io.ReadFull(f, hdr[:])
	return headerOffset(hdr[:n])
}

// headerOffset returns the offset a checkpoint's header b (its first
// ckptHeader bytes, or more) gives, or an error wrapping ErrCheckpoint when
// b does not start like a checkpoint.
func headerOffset(b []byte) (uint64, error) {
	if len(b) < ckptHeader || [8]byte(b[:8]) != ckptMagic {
		return 0, fmt.Errorf("%w: no valid header", ErrCheckpoint)
	}
	return binary.BigEndian.Uint64(b[8:]), nil
}

// Dir is the directory of a session's replay checkpoints, in its session
// directory: one file per checkpoint, named by its offset (CheckpointName).
const Dir = "replay"

const (
	// MaxCheckpoints is how many replay checkpoints a session keeps (the
	// newest): with one every 4 MiB of output, they cover a 256 MiB log.
	MaxCheckpoints = 64
	// CheckpointScrollback is the history a replay checkpoint keeps: what
	// a replay view shows above the screen, not the server's 10,000 lines.
	CheckpointScrollback = 1000
)

const ckptExt = ".ckpt"

// CheckpointName is the file name of the replay checkpoint at off.
func CheckpointName(off uint64) string { return fmt.Sprintf("%020d%s", off, ckptExt) }

func checkpointPath(sessionDir string, off uint64) string {
	return filepath.Join(sessionDir, Dir, CheckpointName(off))
}

// SaveCheckpoint writes a replay checkpoint of model (the screen model's
// MarshalBinary at offset off) into sessionDir, its history trimmed to
// CheckpointScrollback lines, then prunes the series (Prune) for a log
// whose oldest retained byte is first. It reads model, never keeps it.
func SaveCheckpoint(sessionDir string, off uint64, model []byte, first uint64) error {
	scr := screen.New(80, 24, screen.Options{})
	if err := scr.UnmarshalBinary(model); err != nil {
		return fmt.Errorf("replay: save checkpoint: %w", err)
	}
	trimmed, err := scr.MarshalTrimmed(CheckpointScrollback)
	if err != nil {
		return fmt.Errorf("replay: save checkpoint: %w", err)
	}
	return SaveTrimmedCheckpoint(sessionDir, off, trimmed, first)
}

// SaveTrimmedCheckpoint is SaveCheckpoint of a model already trimmed:
// Screen.MarshalTrimmed(CheckpointScrollback), or a MarshalBinary of a
// screen with no more history than that. The screen model makes it so
// without decoding its own checkpoint again.
func SaveTrimmedCheckpoint(sessionDir string, off uint64, trimmed []byte, first uint64) error {
	// Mkdir, not MkdirAll: a session directory removed meanwhile stays so.
	if err := os.Mkdir(filepath.Join(sessionDir, Dir), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("replay: save checkpoint: %w", err)
	}
	if err := WriteCheckpoint(checkpointPath(sessionDir, off), off, trimmed); err != nil {
		return fmt.Errorf("replay: save checkpoint: %w", err)
	}
	return Prune(sessionDir, first, MaxCheckpoints)
}

// Checkpoints lists the offsets of the replay checkpoints in sessionDir,
// ascending (none when it has no Dir). Files being written (atomicfile's
// temporary names) and anything else are not listed.
func Checkpoints(sessionDir string) ([]uint64, error) {
	ents, err := os.ReadDir(filepath.Join(sessionDir, Dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("replay: list checkpoints: %w", err)
	}
	var offs []uint64
	for _, e := range ents {
		digits, ok := strings.CutSuffix(e.Name(), ckptExt)
		if !ok || len(digits) != 20 || strings.Trim(digits, "0123456789") != "" {
			continue
		}
		if off, err := strconv.ParseUint(digits, 10, 64); err == nil {
			offs = append(offs, off)
		}
	}
	slices.Sort(offs)
	return offs, nil
}

// Prune removes the replay checkpoints below first (the log no longer has
// the bytes that follow them) and all but the newest keep of the rest.
func Prune(sessionDir string, first uint64, keep int) error {
	offs, err := Checkpoints(sessionDir)
	if err != nil {
		return err
	}
	i, _ := slices.BinarySearch(offs, first)
	stale := offs[:max(i, len(offs)-keep)]
	for _, off := range stale {
		if err := os.Remove(checkpointPath(sessionDir, off)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("replay: prune checkpoints: %w", err)
		}
	}
	return nil
}
