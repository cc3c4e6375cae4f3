// Package doctor checks a termkeep state directory offline and repairs what
// can be repaired: permissions, holder sockets no holder answers on, torn
// output logs, leftover temporary files, and a registry that disagrees with
// the session directories or cannot be opened at all.
//
// What it guarantees:
//
//   - Offline. Run takes the server lock for its whole run, so no server
//     starts meanwhile. When a server holds the lock, repairs are refused
//     (ServerRunningError) and plain checks run read-only.
//   - Without Repair or Rebuild nothing in the directory changes (the lock
//     file is created if it is missing, as a server would).
//   - A log is only written to when no holder runs for it, and a live
//     holder's files are never removed.
//   - Rebuild never deletes a registry: one that cannot be opened is moved
//     aside to <db>.broken-<time> (its -wal and -shm beside it) before a
//     fresh one is made from the sessions' meta.json files.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/holder"
	"termkeep/internal/outlog"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
)

// Severity says how bad a finding is.
type Severity int

const (
	OK    Severity = iota // nothing wrong
	Warn                  // worth knowing or tidying; termkeep copes
	Error                 // something termkeep cannot cope with until it is fixed
)

func (s Severity) String() string {
	switch s {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	}
	return "error"
}

// Finding is one line of the report.
type Finding struct {
	Severity Severity
	Check    string // "permissions", "sockets", "logs", "registry"
	Subject  string // a path relative to the state directory, or a session id
	Problem  string
	// Fix says what Flag does about it; with no Flag it is advice for the
	// user. "" = nothing to do.
	Fix   string
	Flag  string // "--repair" or "--rebuild"
	Fixed bool   // the fix was applied
}

// String is the finding as one line of output.
func (f Finding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s %-11s ", f.Severity, f.Check)
	if f.Subject != "" {
		b.WriteString(f.Subject + ": ")
	}
	b.WriteString(f.Problem)
	switch {
	case f.Fixed:
		b.WriteString(" [repaired: " + f.Fix + "]")
	case f.Flag != "":
		b.WriteString(" (" + f.Flag + ": " + f.Fix + ")")
	case f.Fix != "":
		b.WriteString(" (" + f.Fix + ")")
	}
	return b.String()
}

// Options say what Run may change. The zero value only checks.
type Options struct {
	Repair  bool // fix permissions, remove orphaned sockets and temp files, truncate torn logs, drop rows without a directory
	Rebuild bool // adopt unknown session directories; replace a missing or unreadable registry
	// Now is the clock for the registry and for the name of a moved-aside
	// registry; nil means time.Now.
	Now func() time.Time
}

// Report is what Run found.
type Report struct {
	Findings []Finding
	// ServerPid is the pid of a server holding the lock (0 = none, or not
	// known); when set, Run ran read-only.
	ServerPid int
	ReadOnly  bool
	// Rebuilt is set when the registry was replaced, with Recovered the
	// number of sessions the new one holds.
	Rebuilt   bool
	Recovered int
}

// Failed reports whether an error remains that was not repaired.
func (r Report) Failed() bool {
	for _, f := range r.Findings {
		if f.Severity == Error && !f.Fixed {
			return true
		}
	}
	return false
}

// ServerRunningError is returned when a repair is asked for while a server
// holds the state directory.
type ServerRunningError struct{ Pid int }

func (e *ServerRunningError) Error() string {
	if e.Pid > 0 {
		return fmt.Sprintf("a server is running (pid %d): stop it first (termkeep shutdown)", e.Pid)
	}
	return "a server is running: stop it first (termkeep shutdown)"
}

// Run checks dir and, as opts allow, repairs it. An error means the checks
// could not run at all; what they find is in the Report.
func Run(ctx context.Context, dir statedir.Dir, opts Options) (Report, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var rep Report
	if st, err := os.Stat(string(dir)); err != nil || !st.IsDir() {
		return rep, fmt.Errorf("doctor: no state directory at %s", dir)
	}
	lock, err := os.OpenFile(dir.ServerLock(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return rep, fmt.Errorf("doctor: open server lock: %w", err)
	}
	defer lock.Close() // releases the flock
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		pid := lockPid(lock)
		if opts.Repair || opts.Rebuild {
			return rep, &ServerRunningError{Pid: pid}
		}
		rep.ServerPid, rep.ReadOnly = pid, true
	}
	c := &checker{dir: dir, opts: opts, rep: &rep, alive: map[int]bool{}}
	c.sessions()
	c.permissions()
	c.sockets()
	c.logs()
	c.registry(ctx)
	return rep, nil
}

// lockPid reads the pid a server wrote into its lock file.
func lockPid(f *os.File) int {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 64))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// checker is one run's state.
type checker struct {
	dir   statedir.Dir
	opts  Options
	rep   *Report
	dirs  []*sessDir
	alive map[int]bool // holder pid -> running as a holder
}

// sessDir is one directory under sessions/.
type sessDir struct {
	id      string
	path    string
	meta    sessiondir.Meta
	metaErr error
	holder  bool // a holder process runs for it
	// When meta.json cannot be read: what sessiondir.Salvage made of the
	// directory instead (in meta), and what it could not recover, or why
	// it could not.
	salvaged   bool
	unknown    []string
	salvageErr error
}

func (c *checker) add(f Finding) {
	if f.Flag != "" && !f.Fixed && c.rep.ReadOnly {
		f.Fix += "; stop the server first"
	}
	c.rep.Findings = append(c.rep.Findings, f)
}

func (c *checker) rel(p string) string {
	if r, err := filepath.Rel(string(c.dir), p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// sessions lists the session directories and whether their holders run.
func (c *checker) sessions() {
	ents, err := os.ReadDir(c.dir.SessionsDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.add(Finding{Severity: Error, Check: "registry", Subject: "sessions", Problem: err.Error()})
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sd := &sessDir{id: e.Name(), path: c.dir.Session(e.Name())}
		sd.meta, sd.metaErr = sessiondir.ReadMeta(sd.path)
		if sd.metaErr != nil {
			sd.meta, sd.unknown, sd.salvageErr = sessiondir.Salvage(sd.path)
			sd.salvaged = sd.salvageErr == nil
		}
		// Its socket or lock says whether a holder runs; meta.json can be
		// unreadable (or name a reused pid) while it does.
		sd.holder = sessiondir.HolderRuns(sd.path) || (sd.metaErr == nil && c.holderRuns(sd.meta.HolderPid))
		c.dirs = append(c.dirs, sd)
	}
}

// holderRuns reports whether pid is a running termkeep holder, not merely a
// process that reused the pid.
func (c *checker) holderRuns(pid int) bool {
	if pid <= 0 {
		return false
	}
	if v, ok := c.alive[pid]; ok {
		return v
	}
	v := holder.IsHolder(pid)
	c.alive[pid] = v
	return v
}

// permissions wants every directory 0700 and every file and socket 0600,
// all owned by us.
func (c *checker) permissions() {
	n := len(c.rep.Findings)
	uid := os.Getuid()
	filepath.WalkDir(string(c.dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			c.add(Finding{Severity: Error, Check: "permissions", Subject: c.rel(p), Problem: err.Error()})
			return nil
		}
		st, err := os.Lstat(p)
		if err != nil {
			return nil // gone meanwhile
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != uid {
			c.add(Finding{Severity: Error, Check: "permissions", Subject: c.rel(p),
				Problem: fmt.Sprintf("owned by uid %d, not by you (uid %d)", sys.Uid, uid),
				Fix:     fmt.Sprintf("`chown %d %s` if it is yours, else remove it", uid, p)})
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		want := fs.FileMode(0o600)
		if st.IsDir() {
			want = 0o700
		}
		mode := st.Mode().Perm()
		if mode == want {
			return nil
		}
		sev := Warn
		if mode&0o022 != 0 {
			sev = Error // others could write into it
		}
		f := Finding{Severity: sev, Check: "permissions", Subject: c.rel(p),
			Problem: fmt.Sprintf("mode %04o, want %04o", mode, want), Fix: fmt.Sprintf("chmod it to %04o", want), Flag: "--repair"}
		if c.opts.Repair {
			if err := os.Chmod(p, want); err != nil {
				f.Problem += "; chmod failed: " + err.Error()
			} else {
				f.Fixed = true
			}
		}
		c.add(f)
		return nil
	})
	if len(c.rep.Findings) == n {
		c.add(Finding{Severity: OK, Check: "permissions", Problem: "directories 0700, files 0600, all yours"})
	}
}

// sockets finds holder.sock files no holder listens on.
func (c *checker) sockets() {
	n := len(c.rep.Findings)
	for _, sd := range c.dirs {
		p := filepath.Join(sd.path, sessiondir.SocketFile)
		if sd.holder && sd.metaErr != nil {
			c.add(Finding{Severity: Warn, Check: "sockets", Subject: c.rel(filepath.Join(sd.path, sessiondir.MetaFile)),
				Problem: "cannot be read (" + sd.metaErr.Error() + "), but its holder runs: its socket is kept",
				Fix:     "nothing: the holder writes it again when the session changes or ends"})
		}
		if _, err := os.Lstat(p); err != nil || sd.holder {
			continue
		}
		why := "meta.json cannot be read"
		if sd.metaErr == nil {
			why = fmt.Sprintf("holder pid %d is not running as a termkeep holder", sd.meta.HolderPid)
		}
		f := Finding{Severity: Warn, Check: "sockets", Subject: c.rel(p), Problem: "orphaned: " + why,
			Fix: "remove it", Flag: "--repair"}
		if c.opts.Repair && !c.rep.ReadOnly {
			if err := os.Remove(p); err != nil {
				f.Problem += "; remove failed: " + err.Error()
			} else {
				f.Fixed = true
			}
		}
		c.add(f)
	}
	if len(c.rep.Findings) == n {
		c.add(Finding{Severity: OK, Check: "sockets", Problem: "every holder socket has its holder"})
	}
}

// logs looks for torn tails and corrupt records in each session's log.
func (c *checker) logs() {
	n := len(c.rep.Findings)
	for _, sd := range c.dirs {
		dir := filepath.Join(sd.path, sessiondir.LogDir)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		subj := c.rel(dir)
		if !sd.holder {
			c.tornTail(sd, dir, subj)
		}
		lost, ranges, err := scanLog(dir)
		switch {
		case err != nil:
			c.add(Finding{Severity: Error, Check: "logs", Subject: subj, Problem: "cannot be read: " + err.Error()})
		case ranges > 0:
			c.add(Finding{Severity: Warn, Check: "logs", Subject: subj,
				Problem: fmt.Sprintf("%d corrupt range(s), %d bytes of output unreadable; readers skip them", ranges, lost)})
		}
	}
	if len(c.rep.Findings) == n {
		c.add(Finding{Severity: OK, Check: "logs", Problem: "no torn or damaged log segments"})
	}
}

// unlimited keeps a writable Open from trimming segments the holder's own
// retention (which may be larger than the default) still keeps.
const unlimited = math.MaxInt64

// tornTail reports, and with Repair truncates, bytes after the last good
// record of a log whose holder is gone. A read-only Open does not say how
// many bytes it ignored, so the check opens a copy of the last segment for
// writing and asks it.
func (c *checker) tornTail(sd *sessDir, dir, subj string) {
	torn, err := tornBytes(dir)
	if err != nil {
		c.add(Finding{Severity: Error, Check: "logs", Subject: subj, Problem: "cannot check the tail: " + err.Error()})
		return
	}
	if torn == 0 {
		return
	}
	f := Finding{Severity: Error, Check: "logs", Subject: subj,
		Problem: fmt.Sprintf("torn tail: %d bytes after the last complete record", torn),
		Fix:     "truncate them", Flag: "--repair"}
	if c.opts.Repair && !c.rep.ReadOnly {
		l, err := outlog.Open(dir, outlog.Options{Retention: unlimited})
		if err != nil {
			f.Problem += "; repair failed: " + err.Error()
		} else {
			f.Fixed = true
			if err := l.Close(); err != nil {
				f.Fixed = false
				f.Problem += "; repair failed: " + err.Error()
			}
		}
	}
	c.add(f)
}

// tornBytes opens a copy of dir's last segment for writing and returns what
// its recovery drops.
func tornBytes(dir string) (int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	last := ""
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".seg") && e.Type().IsRegular() && e.Name() > last {
			last = e.Name() // names are zero-padded offsets: text order is offset order
		}
	}
	if last == "" {
		return 0, nil
	}
	tmp, err := os.MkdirTemp("", "termkeep-doctor")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	if err := copyFile(filepath.Join(dir, last), filepath.Join(tmp, last)); err != nil {
		return 0, err
	}
	l, err := outlog.Open(tmp, outlog.Options{Retention: unlimited, Sync: outlog.SyncNever})
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Recovered(), nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// scanLog reads a log read-only from First to End and counts the ranges a
// reader has to skip as corrupt, and their bytes.
func scanLog(dir string) (lost uint64, ranges int, err error) {
	l, err := outlog.Open(dir, outlog.Options{ReadOnly: true})
	if err != nil {
		return 0, 0, err
	}
	defer l.Close()
	end := l.End()
	cur := l.Cursor(l.First())
	defer cur.Close()
	buf := make([]byte, outlog.ReadBuffer)
	for cur.Offset() < end {
		_, err := cur.Read(buf)
		switch {
		case err == nil:
		case errors.Is(err, outlog.ErrCorrupt):
			from := cur.Offset()
			to := l.SkipCorrupt(from)
			lost += to - from
			ranges++
			if to <= from {
				return lost, ranges, nil
			}
			cur.Seek(to)
		case errors.Is(err, outlog.ErrCompacted):
			cur.Seek(l.First())
		case errors.Is(err, outlog.ErrGap):
			// Recorded on purpose (the disk was full): not damage. The
			// cursor is past it.
		case errors.Is(err, io.EOF):
			return lost, ranges, nil
		default:
			return lost, ranges, err
		}
	}
	return lost, ranges, nil
}

// currentUser is the owner recorded for adopted sessions, as the server
// records it.
func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return strconv.Itoa(os.Getuid())
}
