package fgstate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"termkeep/internal/procinfo"
)

// maxTasks bounds the threads looked at in one process: a process with
// more is judged by its first ones.
const maxTasks = 256

// Look says what the foreground process group of the pty whose master
// is the descriptor ptmx is doing; child is the session's program's pid.
// It reads /proc (every process's stat, then the group's threads and
// descriptors) and opens the terminal side for a moment, to count the
// bytes typed and not yet read: a descriptor of it kept open would keep
// the pty from hanging up once the session's processes are gone.
func Look(ptmx int, child int) Facts {
	f := Facts{Unread: -1}
	pgrp, err := unix.IoctlGetInt(ptmx, unix.TIOCGPGRP)
	if err != nil || pgrp <= 0 {
		return f
	}
	f.Pgrp, f.Shell = pgrp, pgrp == child
	n, err := unix.IoctlGetUint32(ptmx, unix.TIOCGPTN)
	if err != nil {
		return f
	}
	path := "/dev/pts/" + strconv.Itoa(int(n))
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return f
	}
	f.Unread = unread(path)
	if calls == nil {
		return f
	}
	var tasks, own []Task
	for _, p := range members(pgrp) {
		ts := threads(p, st.Rdev)
		if p.pid == pgrp {
			f.LeaderComm, own = p.comm, ts
		}
		tasks = append(tasks, ts...)
	}
	var who *Task
	f.State, who = Classify(tasks)
	if s, w := Classify(own); f.Shell && s == WaitingOnEvents {
		// The session's program waits on its terminal: what a shell
		// without job control left running in its group beside it (a
		// job put in the background, fish's completions helper at its
		// first start) does not read the terminal.
		f.State, who = s, w
	}
	if who != nil {
		f.Pid, f.Comm = who.Pid, who.Comm
	}
	return f
}

// unread is TIOCINQ on the terminal side at path; -1 when it cannot be
// asked.
func unread(path string) int {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	defer unix.Close(fd)
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err != nil {
		return -1
	}
	return n
}

// member is a process of the foreground group. Its controlling terminal
// is the pty (a foreground group is one of its terminal's session), so
// its /dev/tty is the pty too.
type member struct {
	pid  int
	comm string
	dir  string
}

// members lists the live processes of process group pgrp. It reads every
// process's stat, allocating only for the members.
func members(pgrp int) []member {
	var out []member
	procinfo.Walk(func(pid int, stat []byte) {
		comm, state, g, ok := statFields(stat)
		if ok && g == pgrp && state != 'Z' && state != 'X' {
			out = append(out, member{pid: pid, comm: clean(string(comm)), dir: "/proc/" + strconv.Itoa(pid)})
		}
	})
	return out
}

// clean keeps a process name fit for the wire: valid UTF-8, 64 bytes.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "?")
	for len(s) > 64 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}

// threads reads what each thread of process p is blocked in; tty is the
// terminal's device.
func threads(p member, tty uint64) []Task {
	ids, err := os.ReadDir(filepath.Join(p.dir, "task"))
	if err != nil {
		return []Task{{Pid: p.pid, Comm: p.comm, Running: true}}
	}
	var out []Task
	holds := -1 // whether p holds the terminal open, once asked
	for i, id := range ids {
		if i == maxTasks {
			break
		}
		t := Task{Pid: p.pid, Comm: p.comm}
		b, err := os.ReadFile(filepath.Join(p.dir, "task", id.Name(), "syscall"))
		running, nr, arg0, ok := parseSyscall(b)
		switch {
		case err != nil || !ok || running:
			t.Running = true
		case nr >= 0:
			t.Call, _ = callOf(nr)
		}
		if t.Call == CallRead && arg0 <= 1<<20 {
			t.OnTerminal = isTerminal(filepath.Join(p.dir, "fd", strconv.FormatUint(arg0, 10)), tty)
		}
		if t.Call == CallPoll {
			if holds < 0 {
				holds = 0
				if holdsTerminal(filepath.Join(p.dir, "fd"), tty) {
					holds = 1
				}
			}
			t.HoldsTerminal = holds == 1
		}
		out = append(out, t)
	}
	return out
}

// devTTY is /dev/tty's device: whatever the opener's controlling terminal is.
var devTTY = unix.Mkdev(5, 0)

// isTerminal reports whether the descriptor at path (/proc/PID/fd/N) of
// a member is the terminal of device tty, or /dev/tty.
func isTerminal(path string, tty uint64) bool {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return false
	}
	return st.Rdev == tty || st.Rdev == devTTY
}

// holdsTerminal reports whether one of the descriptors in fdDir is the
// terminal (as isTerminal).
func holdsTerminal(fdDir string, tty uint64) bool {
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if isTerminal(filepath.Join(fdDir, fd.Name()), tty) {
			return true
		}
	}
	return false
}
