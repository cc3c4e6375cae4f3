package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"termkeep/internal/atomicfile"
)

// The registry's generation counts the changes made to its sessions and
// workspaces: triggers (migration 10) add one in the same transaction as
// each change. A copy is kept beside the registry, in <registry>.generation,
// rewritten after each change. SQLite opens a registry whose WAL was lost
// or garbled without a word, at the state of its last checkpoint (after a
// SIGKILL that can be empty); only the copy, ahead of the registry, tells
// that changes are gone.
//
// The copy is written after the commit and without fsync, so it can be
// behind the registry (a crash between the two, a full disk), which says
// nothing; it is never ahead unless the registry lost what it had
// committed. Once found, a rollback is kept in the copy until it is
// resolved (ClearRollback, by termkeep doctor --rebuild), so that every
// server start and every doctor run reports it until then.

// GenerationSuffix is added to the registry's path for the file that keeps
// its generation.
const GenerationSuffix = ".generation"

// Rollback is a registry found behind the generation recorded beside it.
type Rollback struct {
	From    uint64    `json:"from"` // the generation recorded beside the registry
	To      uint64    `json:"to"`   // the registry's own when it was found
	FoundAt time.Time `json:"found_at"`
}

// Lost is how many changes the rollback lost.
func (r Rollback) Lost() uint64 { return r.From - r.To }

// Describe says what happened, after the registry's name.
func (r Rollback) Describe() string {
	return fmt.Sprintf("rolled back from generation %d to %d (found %s): the last %d change(s) it recorded to sessions and workspaces are lost, as a lost or garbled WAL loses them",
		r.From, r.To, r.FoundAt.Local().Format("2006-01-02 15:04:05"), r.Lost())
}

// GenerationCheck is what Open found comparing the registry's generation
// with the one recorded beside it.
type GenerationCheck struct {
	// Registry is the registry's generation when it was opened.
	Registry uint64
	// Rollback is set while a rollback is not resolved; New when this
	// Open found it.
	Rollback *Rollback
	New      bool
	// Problem says why the recorded generation could not be read ("" when
	// it could, or when there was none yet): a rollback before this Open
	// cannot be told.
	Problem string
}

// genFile is the file beside the registry.
type genFile struct {
	Generation uint64    `json:"generation"`
	Rollback   *Rollback `json:"rollback,omitempty"`
}

// maxGenFile bounds what is read of the file: it is a few dozen bytes.
const maxGenFile = 4096

// judgeGeneration compares the registry's generation with the file beside
// it (its bytes, or the error reading it) and says what Open found and
// whether the file must be written again.
func judgeGeneration(registry uint64, file []byte, readErr error, now time.Time) (c GenerationCheck, write bool) {
	c.Registry = registry
	switch {
	case errors.Is(readErr, fs.ErrNotExist):
		return c, true // a new registry, or one from before generations
	case readErr != nil:
		c.Problem = readErr.Error()
		return c, true
	case len(file) > maxGenFile:
		c.Problem = fmt.Sprintf("it holds %d bytes, not a generation", len(file))
		return c, true
	}
	var g genFile
	if err := json.Unmarshal(file, &g); err != nil {
		c.Problem = "it is damaged: " + err.Error()
		return c, true
	}
	if g.Generation > registry {
		c.Rollback = &Rollback{From: g.Generation, To: registry, FoundAt: now.UTC()}
		c.New = true
		return c, true
	}
	if r := g.Rollback; r != nil && r.From > r.To {
		c.Rollback = r
	}
	return c, g.Generation != registry || (g.Rollback != nil && c.Rollback == nil)
}

// checkGeneration reads both generations, in that order, so that a
// change committed meanwhile can make the registry look ahead, never
// behind; keeps what it found for Generation; and, with record, writes it
// beside the registry.
func (s *Store) checkGeneration(ctx context.Context, record bool) error {
	b, rerr := os.ReadFile(s.path + GenerationSuffix)
	n, err := s.generation(ctx)
	if err != nil {
		return err
	}
	c, write := judgeGeneration(n, b, rerr, s.now())
	s.genMu.Lock()
	defer s.genMu.Unlock()
	s.gen = c
	s.genReady = true
	if write && record {
		s.writeGeneration(n)
	}
	return nil
}

// generation reads the registry's generation. A table edited by hand (no
// row, a negative count) reads as 0 rather than fail the registry's open.
func (s *Store) generation(ctx context.Context) (uint64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(n), 0) FROM generation`).Scan(&n)
	return uint64(max(n, 0)), err
}

// Generation returns what Open found comparing the registry's generation
// with the one recorded beside it, and whether a rollback is resolved
// since.
func (s *Store) Generation() GenerationCheck {
	s.genMu.Lock()
	defer s.genMu.Unlock()
	return s.gen
}

// ClearRollback records that a rollback is resolved (the sessions adopted
// again from their directories): it is no longer reported.
func (s *Store) ClearRollback(ctx context.Context) error {
	n, err := s.generation(ctx)
	if err != nil {
		return wrap("read generation", err)
	}
	s.genMu.Lock()
	s.gen.Rollback, s.gen.New = nil, false
	err = s.writeGeneration(n)
	s.genMu.Unlock()
	s.copyWorkspaces(ctx) // left alone while the rollback stood
	return wrap("record generation", err)
}

// changed records the registry's generation beside it after a change.
// Failing to is not the change's failure: the file is then behind, which
// says nothing.
func (s *Store) changed(ctx context.Context) {
	s.genMu.Lock()
	ready := s.genReady
	s.genMu.Unlock()
	if !ready {
		return
	}
	n, err := s.generation(ctx)
	if err != nil {
		return
	}
	s.genMu.Lock()
	defer s.genMu.Unlock()
	if n > s.genWritten {
		s.writeGeneration(n)
	}
}

// writeGeneration writes the file beside the registry. genMu is held.
func (s *Store) writeGeneration(n uint64) error {
	b, _ := json.Marshal(genFile{Generation: n, Rollback: s.gen.Rollback})
	if err := atomicfile.Write(s.path+GenerationSuffix, append(b, '\n'), false); err != nil {
		return err
	}
	s.genWritten = n
	return nil
}
