//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: the kernel's
// USER_HZ, 100 on every Linux architecture Go supports.
const userHZ = 100

// procCPU returns the CPU time (user+system) a live process has used, and,
// separately, what its reaped children used (cutime+cstime): for the child
// shell, that is the cat it ran.
func procCPU(pid int) (self, children time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name is in parentheses and may hold spaces: split after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("proc: odd stat for pid %d", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// Fields after ")" start at field 3 (state); utime is field 14.
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("proc: short stat for pid %d", pid)
	}
	var t [4]int64
	for k := range t {
		if t[k], err = strconv.ParseInt(f[11+k], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("proc: stat for pid %d: %w", pid, err)
		}
	}
	tick := time.Second / userHZ
	return time.Duration(t[0]+t[1]) * tick, time.Duration(t[2]+t[3]) * tick, nil
}

// memory is the part of /proc/<pid>/smaps_rollup the report shows, in KiB.
type memory struct {
	Rss, Pss, Private int64 // Private = Private_Clean + Private_Dirty
}

// procMemory reads a process's memory from smaps_rollup.
func procMemory(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "Rss":
			m.Rss = n
		case "Pss":
			m.Pss = n
		case "Private_Clean", "Private_Dirty":
			m.Private += n
		}
	}
	return m, sc.Err()
}

// procCmdline returns a process's command line, to check that a pid still
// belongs to the process the bench started before signalling it.
func procCmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
}

// kernelWorkers returns the CPU time all kworker threads have used: the
// kernel moves pty data from the writing side to the reading side in a
// worker (flush_to_ldisc), charged to no process of the bench's.
func kernelWorkers() (time.Duration, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil || !bytes.HasPrefix(comm, []byte("kworker")) {
			continue
		}
		if t, _, err := procCPU(pid); err == nil {
			sum += t
		}
	}
	return sum, nil
}

// machineBusy returns the CPU time all cores spent busy (user, nice, system,
// irq, softirq) since boot. It covers what no process is charged for, such
// as the kernel workers that move pty data between the two sides.
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, fmt.Errorf("proc: odd /proc/stat")
	}
	var sum int64
	for _, i := range []int{1, 2, 3, 6, 7} { // user nice system irq softirq
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc: /proc/stat: %w", err)
		}
		sum += n
	}
	return time.Duration(sum) * (time.Second / userHZ), nil
}

// firstChild returns the pid of a child of pid (0 if none): the session
// shell of a process that started one, such as script.
func firstChild(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if f := strings.Fields(string(b)); len(f) > 0 {
		c, _ := strconv.Atoi(f[0])
		return c
	}
	return 0
}

// ptyEcho reports whether the terminal of a pty echoes input (ECHO in
// c_lflag), asked through its master. A program that puts its terminal in
// raw mode, as tmux attach and termkeep attach do, turns it off.
func ptyEcho(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var t syscall.Termios
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	}); err != nil {
		return false, err
	}
	if errno != 0 {
		return false, errno
	}
	return t.Lflag&syscall.ECHO != 0, nil
}

// pidsWithCmdline returns every process whose command line contains sub:
// the daemons a command such as `dtach -n` leaves behind, which the bench
// did not start as its own children.
func pidsWithCmdline(sub string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if strings.Contains(procCmdline(pid), sub) {
			out = append(out, pid)
		}
	}
	return out
}

// procRuntime returns the time a live process's threads have spent on a
// CPU, summed from each thread's /proc/<pid>/task/<tid>/schedstat (in
// nanoseconds): unlike the tick counts of /proc/<pid>/stat, which round
// each process down to 10 ms, it adds up over hundreds of processes that
// each ran for a few milliseconds. Threads that have already ended are not
// counted.
func procRuntime(pid int) (time.Duration, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, e := range ents {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, e.Name()))
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc: schedstat of pid %d: %w", pid, err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}
