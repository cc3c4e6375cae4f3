package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"termkeep/internal/sessiondir"
	"termkeep/internal/store"
)

// registry compares the registry with the session directories, tidies
// leftover meta.json temporary files, and rebuilds a registry that is
// missing or cannot be opened.
func (c *checker) registry(ctx context.Context) {
	n := len(c.rep.Findings)
	c.tempFiles()
	db := c.dir.DB()
	st, err := c.openRegistry(ctx, db)
	switch {
	case errors.Is(err, store.ErrLocked):
		// Nothing is wrong with the file: a rebuild would lose what it holds.
		c.add(Finding{Severity: Error, Check: "registry", Subject: filepath.Base(db), Problem: err.Error(),
			Fix: "stop the process that holds it in a transaction (see /proc/locks or fuser), then run doctor again"})
		return
	case errors.Is(err, store.ErrReadOnly):
		c.add(Finding{Severity: Error, Check: "registry", Subject: filepath.Base(db), Problem: err.Error(),
			Fix: "make it and its directory writable (a read-only mount: remount it read-write), then run doctor again"})
		return
	}
	if err != nil {
		f := Finding{Severity: Error, Check: "registry", Subject: filepath.Base(db), Problem: err.Error(),
			Fix: "move it aside and rebuild it from the sessions' meta.json", Flag: "--rebuild"}
		if c.opts.Rebuild && !c.rep.ReadOnly {
			if rerr := c.rebuild(ctx, db); rerr != nil {
				f.Problem += "; rebuild failed: " + rerr.Error()
			} else {
				f.Fixed = true
				f.Fix = fmt.Sprintf("rebuilt from meta.json: %d session(s) recovered", c.rep.Recovered)
			}
		}
		c.add(f)
		return
	}
	defer st.Close()
	rows, err := st.Sessions(ctx)
	if err != nil {
		c.add(Finding{Severity: Error, Check: "registry", Subject: filepath.Base(db), Problem: "cannot list sessions: " + err.Error()})
		return
	}
	byID := make(map[string]*sessDir, len(c.dirs))
	for _, sd := range c.dirs {
		byID[sd.id] = sd
	}
	known := make(map[string]bool, len(rows))
	for _, row := range rows {
		known[row.ID] = true
		sd := byID[row.ID]
		if sd == nil {
			f := Finding{Severity: Error, Check: "registry", Subject: "session " + row.ID,
				Problem: fmt.Sprintf("registered (%s) but its directory is missing", row.State),
				Fix:     "remove the row: there is no log or holder left to reach", Flag: "--repair"}
			if c.opts.Repair && !c.rep.ReadOnly {
				if err := st.Delete(ctx, row.ID); err != nil {
					f.Problem += "; remove failed: " + err.Error()
				} else {
					f.Fixed = true
				}
			}
			c.add(f)
			continue
		}
		if row.State == store.StateRunning && !sd.holder && !c.holderRuns(row.HolderPid) {
			c.add(Finding{Severity: Warn, Check: "registry", Subject: "session " + row.ID,
				Problem: "registered running but its holder is gone; the next server marks it interrupted"})
		}
	}
	for _, sd := range c.dirs {
		if known[sd.id] {
			continue
		}
		f := Finding{Severity: Warn, Check: "registry", Subject: "session " + sd.id,
			Problem: "directory not in the registry"}
		sess, err := sd.session()
		if err != nil {
			f.Problem += "; it cannot be adopted: " + err.Error()
			c.add(f)
			continue
		}
		f.Fix, f.Flag = "adopt it from meta.json", "--rebuild"
		if sd.salvaged {
			f.Problem += "; its meta.json cannot be read (" + sd.metaErr.Error() + ")"
			f.Fix = "adopt it from its directory, status record and log (unknown: " + strings.Join(sd.unknown, ", ") + ")"
		}
		if c.opts.Rebuild && !c.rep.ReadOnly {
			if err := c.recreate(ctx, st, sess); err != nil {
				f.Problem += "; adopt failed: " + err.Error()
			} else {
				f.Fixed = true
				f.Fix = "adopted as " + string(sess.State)
				if sd.salvaged {
					f.Fix += " (" + sessiondir.SalvagedReason(sd.unknown) + ")"
				}
			}
		}
		c.add(f)
	}
	if c.opts.Rebuild && !c.rep.ReadOnly {
		c.workspaces(ctx, st)
	}
	c.generation(ctx, st, db)
	if len(c.rep.Findings) == n {
		c.add(Finding{Severity: OK, Check: "registry", Problem: fmt.Sprintf("%d session(s), each with its directory", len(rows))})
	}
}

// openRegistry opens the registry without creating it: a missing file is
// an error here, not an empty registry.
func (c *checker) openRegistry(ctx context.Context, db string) (*store.Store, error) {
	if _, err := os.Stat(db); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.New("the registry is missing")
		}
		return nil, err
	}
	if (c.opts.Repair || c.opts.Rebuild) && !c.rep.ReadOnly {
		return store.Open(ctx, db, c.opts.Now)
	}
	return store.OpenToCheck(ctx, db, c.opts.Now) // a rollback stays new to the next server
}

// rebuild moves the registry at db aside, with its -wal and -shm (renamed
// together, so SQLite would still pair them), and makes a new one holding
// every session directory whose meta.json can be read.
func (c *checker) rebuild(ctx context.Context, db string) error {
	aside := db + ".broken-" + c.opts.Now().UTC().Format("20060102T150405.000000000Z")
	for _, sfx := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(db+sfx, aside+sfx); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("move the registry aside: %w", err)
		}
	}
	st, err := store.Open(ctx, db, c.opts.Now)
	if err != nil {
		return err
	}
	defer st.Close()
	c.rep.Rebuilt = true
	for _, sd := range c.dirs {
		sess, err := sd.session()
		if err != nil {
			c.add(Finding{Severity: Warn, Check: "registry", Subject: "session " + sd.id,
				Problem: "not recovered: " + err.Error()})
			continue
		}
		if err := c.recreate(ctx, st, sess); err != nil {
			c.add(Finding{Severity: Warn, Check: "registry", Subject: "session " + sd.id,
				Problem: "not recovered: " + err.Error()})
			continue
		}
		if sd.salvaged {
			c.add(Finding{Severity: Warn, Check: "registry", Subject: "session " + sd.id,
				Problem: "meta.json cannot be read (" + sd.metaErr.Error() + ")", Fixed: true,
				Fix: "recovered as " + string(sess.State) + " from its directory, status record and log (unknown: " + strings.Join(sd.unknown, ", ") + ")"})
		}
		c.rep.Recovered++
	}
	c.workspaces(ctx, st)
	// Made anew from every directory: a rollback of the old one is moot.
	if err := st.ClearRollback(ctx); err != nil {
		c.add(Finding{Severity: Warn, Check: "registry", Subject: filepath.Base(db) + store.GenerationSuffix,
			Problem: "cannot record the rebuilt registry's generation: " + err.Error()})
	}
	return nil
}

// generation reports what opening the registry found comparing its
// generation with the one kept beside it. A rollback is an error: the
// registry opens, but what it recorded since its last checkpoint is gone.
// --rebuild resolves it once the directories the registry lost are
// adopted (the loop before this one).
func (c *checker) generation(ctx context.Context, st *store.Store, db string) {
	g := st.Generation()
	if g.Problem != "" {
		c.add(Finding{Severity: Warn, Check: "registry", Subject: filepath.Base(db) + store.GenerationSuffix,
			Problem: "cannot be read (" + g.Problem + "), so a rollback of the registry before now cannot be told; it was written again"})
	}
	r := g.Rollback
	if r == nil {
		return
	}
	f := Finding{Severity: Error, Check: "registry", Subject: filepath.Base(db), Problem: r.Describe(),
		Fix: "adopt every session directory it lost from its meta.json, then stop reporting the rollback (workspaces without sessions, users and tokens it lost must be made again)", Flag: "--rebuild"}
	if c.opts.Rebuild && !c.rep.ReadOnly {
		if err := st.ClearRollback(ctx); err != nil {
			f.Problem += "; clearing it failed: " + err.Error()
		} else {
			f.Fixed = true
			f.Fix = "the lost session directories are adopted from meta.json; workspaces without sessions, users and tokens it lost must be made again"
		}
	}
	c.add(f)
}

// recreate puts a session recovered from meta.json in the registry, with
// its name unless another session has taken it meanwhile (then without,
// saying so).
func (c *checker) recreate(ctx context.Context, st *store.Store, sess store.Session) error {
	err := st.CreateSession(ctx, sess)
	if errors.Is(err, store.ErrNameTaken) {
		c.add(Finding{Severity: Warn, Check: "registry", Subject: "session " + sess.ID,
			Problem: fmt.Sprintf("its name %q belongs to another session: recovered without a name", sess.Name)})
		sess.Name = ""
		err = st.CreateSession(ctx, sess)
	}
	return err
}

// workspaces makes again every workspace the registry lacks (a rebuilt
// one has none): those in the copy kept beside the registry with their
// own directory, pause and auto-restore, then any other a session names
// with the directory of its first session, as a create that names a new
// workspace does, saying what is lost.
func (c *checker) workspaces(ctx context.Context, st *store.Store) {
	db := c.dir.DB()
	kept, err := store.ReadWorkspaceCopy(db)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.add(Finding{Severity: Warn, Check: "registry", Subject: filepath.Base(db) + store.WorkspacesSuffix,
			Problem: "cannot be read (" + err.Error() + "): workspaces the registry lacks are made again without their own settings"})
	}
	namedBy := map[string]string{} // workspace => its first session
	rows, err := st.Sessions(ctx)
	if err != nil {
		return
	}
	for _, sess := range rows {
		if sess.Workspace != "" && namedBy[sess.Workspace] == "" {
			namedBy[sess.Workspace] = sess.ID
		}
	}
	missing := func(name string) bool {
		_, err := st.Workspace(ctx, name)
		return errors.Is(err, store.ErrWorkspaceNotFound)
	}
	problem := func(name string) string {
		if id := namedBy[name]; id != "" {
			return fmt.Sprintf("named by session %s but not in the registry", id)
		}
		return "kept beside the registry but not in it"
	}
	for _, w := range kept {
		if !missing(w.Name) {
			continue
		}
		f := Finding{Severity: Warn, Check: "registry", Subject: "workspace " + w.Name, Problem: problem(w.Name)}
		if err := st.CreateWorkspace(ctx, w); err != nil {
			f.Problem += "; making it again failed: " + err.Error()
		} else {
			f.Fixed = true
			paused := "not paused"
			if w.Paused {
				paused = "paused"
			}
			f.Fix = fmt.Sprintf("made again with directory %s, auto-restore %s, %s (from the copy beside the registry)", w.Dir, onOff(w.AutoRestore), paused)
		}
		c.add(f)
	}
	for _, sess := range rows {
		if sess.Workspace == "" || namedBy[sess.Workspace] != sess.ID || !missing(sess.Workspace) {
			continue
		}
		f := Finding{Severity: Warn, Check: "registry", Subject: "workspace " + sess.Workspace, Problem: problem(sess.Workspace)}
		if err := st.CreateWorkspace(ctx, store.Workspace{Name: sess.Workspace, Dir: sess.Cwd}); err != nil {
			f.Problem += "; making it again failed: " + err.Error()
		} else {
			f.Fixed = true
			f.Fix = fmt.Sprintf("made again with directory %s (from the session; its own directory, pause and auto-restore settings were not kept)", sess.Cwd)
		}
		c.add(f)
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// session is the registry row a directory's meta.json describes: running
// while its holder runs, else interrupted when meta.json says the machine
// ended it, exited (or closed) with the status meta.json recorded, else
// interrupted (the holder died without recording an end).
func (sd *sessDir) session() (store.Session, error) {
	m := sd.meta
	switch {
	case sd.metaErr != nil && !sd.salvaged:
		return store.Session{}, fmt.Errorf("%w; %w", sd.metaErr, sd.salvageErr)
	case m.ID != sd.id:
		return store.Session{}, fmt.Errorf("meta.json names session %q, not %q", m.ID, sd.id)
	}
	sess := store.Session{
		ID: m.ID, Name: m.Name, Workspace: m.Workspace, Command: m.Command, Cwd: m.Cwd,
		Cols: int(m.Cols), Rows: int(m.Rows), Owner: currentUser(), CreatedAt: m.StartedAt,
		EnvPolicy: m.EnvPolicy, AutoRestore: m.AutoRestore, RestoreCommand: m.RestoreCommand,
		SizePolicy: m.SizePolicy, ShellIntegration: !m.NoShellIntegration,
	}
	switch {
	case sd.holder:
		sess.State, sess.Pid, sess.HolderPid = store.StateRunning, m.Pid, m.HolderPid
	case m.Interrupted:
		sess.State, sess.Reason, sess.EndedAt = store.StateInterrupted, m.Reason, m.EndedAt
	case m.ExitCode != nil:
		sess.State, sess.ExitCode, sess.EndedAt = store.StateExited, m.ExitCode, m.EndedAt
		if m.Closed {
			sess.State = store.StateClosed
		}
	case m.Child != nil:
		// The holder died while it read what the child left behind: the
		// child's own exit is known.
		code := m.Child.ExitCode
		sess.State, sess.ExitCode, sess.EndedAt = store.StateExited, &code, &m.Child.At
	default:
		sess.State = store.StateInterrupted
		sess.Reason = fmt.Sprintf("holder pid %d is gone (found by termkeep doctor)", m.HolderPid)
	}
	if sd.salvaged {
		note := sessiondir.SalvagedReason(sd.unknown)
		if sess.Reason != "" {
			note = sess.Reason + "; " + note
		}
		sess.Reason = note
	}
	return sess, nil
}

// tempFiles finds the temporary files an interrupted meta.json write left.
// A running holder's are left alone: it may be about to rename one.
func (c *checker) tempFiles() {
	for _, sd := range c.dirs {
		tmps, _ := filepath.Glob(filepath.Join(sd.path, "."+sessiondir.MetaFile+".*"))
		for _, p := range tmps {
			f := Finding{Severity: Warn, Check: "registry", Subject: c.rel(p),
				Problem: "leftover temporary file of a meta.json write", Fix: "delete it", Flag: "--repair"}
			if sd.holder {
				if st, err := os.Stat(p); err != nil || time.Since(st.ModTime()) < time.Minute {
					continue // being written
				}
			}
			if c.opts.Repair && !c.rep.ReadOnly {
				if err := os.Remove(p); err != nil {
					f.Problem += "; delete failed: " + err.Error()
				} else {
					f.Fixed = true
				}
			}
			c.add(f)
		}
	}
}
