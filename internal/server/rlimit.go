package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// What a session costs the server's limits, as measured on Linux: the
// server keeps four descriptors per session (the holder's socket, the log
// segment its viewers read, and the pidfd and stdout pipe of the holder it
// waits for) and one thread (waiting for the holder); starting one holds
// about ten descriptors at once (pipes to the holder, /dev/null, a pidfd,
// the request). A holder has about six threads and its child at least one.
const (
	filesToStart = 12 // descriptors a create or restore may hold at once
	filesReserve = 16 // left free after it, for viewers and requests
	tasksToStart = 8  // the holder's threads, its child and the server's waiter
	tasksReserve = 16 // the server's own threads: Go stops a process that cannot make one
)

// LimitError is a session the server could not start within its process
// limits: open files (RLIMIT_NOFILE) or processes (RLIMIT_NPROC). Its
// message names the limit and how to raise it.
type LimitError struct {
	Resource string // "files" or "processes"
	Err      error  // the system's refusal, when there was one
	msg      string
}

func (e *LimitError) Error() string { return e.msg }
func (e *LimitError) Unwrap() error { return e.Err }

// roomForSession refuses a create or a restore, before anything is done for
// it, when the server's file or process limit leaves too little room for
// one more session plus a reserve: a refusal with a sentence beats a
// create that dies half-way, or one that succeeds and leaves no descriptor
// to accept the next viewer with (which would hang every client).
func roomForSession() error {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur != unix.RLIM_INFINITY {
		open, err := openFiles()
		if err != nil && outOfFiles(err) {
			return filesError(err)
		}
		if err == nil && uint64(open+filesToStart+filesReserve) > lim.Cur {
			return filesError(nil)
		}
	}
	if nprocApplies(&lim) {
		n, err := userTasks(os.Getuid())
		if err == nil && uint64(n+tasksToStart+tasksReserve) > lim.Cur {
			return processesError(nil)
		}
	}
	return nil
}

// limitError explains err, a failure to start a session, when a process
// limit caused it, and returns nil otherwise. The holder's own refusals
// arrive as text (its answer on stdout), hence the look at the words too.
func limitError(err error) *LimitError {
	var le *LimitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &le):
		return le
	case outOfFiles(err):
		return filesError(err)
	case strings.Contains(err.Error(), "fork/exec") &&
		(errors.Is(err, syscall.EAGAIN) || strings.Contains(err.Error(), syscall.EAGAIN.Error())):
		return processesError(err)
	case strings.Contains(err.Error(), "no answer from the holder") && atProcessLimit():
		// A holder that cannot make the threads the Go runtime needs dies
		// before it answers.
		return processesError(err)
	}
	return nil
}

// atProcessLimit reports whether the server's user has too few processes
// left under RLIMIT_NPROC for a session.
func atProcessLimit() bool {
	var lim unix.Rlimit
	if !nprocApplies(&lim) {
		return false
	}
	n, err := userTasks(os.Getuid())
	// A holder that died of it is gone by now: within two sessions' worth
	// of the limit counts.
	return err == nil && uint64(n+2*tasksToStart) > lim.Cur
}

// outOfFiles reports whether err is a lack of file descriptors, in this
// process (EMFILE) or in the system (ENFILE).
func outOfFiles(err error) bool {
	if err == nil {
		return false
	}
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		strings.Contains(err.Error(), syscall.EMFILE.Error()) || strings.Contains(err.Error(), syscall.ENFILE.Error())
}

const endSome = "or end sessions you no longer need (termkeep kill, termkeep rm)"

func filesError(err error) *LimitError {
	if err != nil && (errors.Is(err, syscall.ENFILE) || strings.Contains(err.Error(), syscall.ENFILE.Error())) {
		return &LimitError{Resource: "files", Err: err, msg: "too many open files in the system: the kernel's limit (sysctl fs.file-max) is reached; " +
			"raise it, " + endSome}
	}
	var lim unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &lim)
	in := ""
	if open, oerr := openFiles(); oerr == nil {
		in = fmt.Sprintf(" and %d are open, too few to start another session", open)
	}
	return &LimitError{Resource: "files", Err: err, msg: fmt.Sprintf("too many open files: the server's file limit (ulimit -n) is %d%s; "+
		"raise it where termkeep serve starts (ulimit -n, or LimitNOFILE= in a systemd unit) and restart the server, %s", lim.Cur, in, endSome)}
}

func processesError(err error) *LimitError {
	var lim unix.Rlimit
	if !nprocApplies(&lim) {
		return &LimitError{Resource: "processes", Err: err, msg: "too many processes: the system refused to start another (resource temporarily unavailable); " +
			"a cgroup's pids.max (TasksMax= in a systemd unit) or kernel.pid_max may be reached: raise it, " + endSome}
	}
	in := ""
	if n, terr := userTasks(os.Getuid()); terr == nil {
		in = fmt.Sprintf(" and has %d, too few to start another session", n)
	}
	return &LimitError{Resource: "processes", Err: err, msg: fmt.Sprintf("too many processes: the server's user (%s) may have %d processes and threads (ulimit -u)%s; "+
		"raise it where termkeep serve starts (ulimit -u, or LimitNPROC= in a systemd unit) and restart the server, %s", currentUser(), lim.Cur, in, endSome)}
}

// nprocApplies fills lim with RLIMIT_NPROC and reports whether it bounds
// this process: it is finite and the process is not root, which the
// kernel exempts.
func nprocApplies(lim *unix.Rlimit) bool {
	return os.Geteuid() != 0 && unix.Getrlimit(unix.RLIMIT_NPROC, lim) == nil && lim.Cur != unix.RLIM_INFINITY
}

// openFiles counts this process's open descriptors (Linux: /proc/self/fd;
// macOS: /dev/fd), not counting the one that reads the directory.
func openFiles() (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		if ents, err = os.ReadDir("/dev/fd"); err != nil {
			return 0, err
		}
	}
	return len(ents) - 1, nil
}

// userTasks counts the threads of every process whose real uid is uid:
// what RLIMIT_NPROC bounds (Linux: /proc/PID/status).
func userTasks(uid int) (int, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*/status")
	if err != nil || len(dirs) == 0 {
		return 0, errors.New("no /proc to count processes in")
	}
	want, n := strconv.Itoa(uid), 0
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		mine, threads := false, 1
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) >= 2 && f[0] == "Uid:":
				mine = f[1] == want
			case len(f) >= 2 && f[0] == "Threads:":
				threads, _ = strconv.Atoi(f[1])
			}
		}
		if mine {
			n += threads
		}
	}
	return n, nil
}
