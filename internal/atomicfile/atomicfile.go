// Package atomicfile replaces small files whole: a reader, or a crash,
// sees the old file or the new one, never part of one. termkeep keeps
// meta.json, screen checkpoints and the owner token this way.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with data, mode 0600, through a temporary file in
// the same directory and a rename. With sync, the data and the rename are
// made durable (fsync of the file, then of the directory) before Write
// returns; without it, a crash may leave the old file, never a torn one.
func Write(path string, data []byte, sync bool) error { return WriteThrough(path, data, sync, nil) }

// WriteThrough is Write with the data written through wrap(f) (nil: f
// itself), f being the temporary file: tests put a full disk there.
func WriteThrough(path string, data []byte, sync bool, wrap func(*os.File) io.Writer) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", path, err)
	}
	tmp := f.Name()
	var w io.Writer = f
	if wrap != nil {
		w = wrap(f)
	}
	_, err = w.Write(data)
	if cerr := f.Chmod(0o600); err == nil {
		err = cerr
	}
	if sync && err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("atomicfile: write %s: %w", path, err)
	}
	if sync {
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}
