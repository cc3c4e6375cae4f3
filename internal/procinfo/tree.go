package procinfo

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Descendants returns pid and every process below it (its children, their
// children ...), in no particular order: the processes of a session whose
// child is pid. A process that leaves its parent (a daemon re-parented to
// init) is no longer found.
func Descendants(pid int) ([]int, error) { return descendants(pid) }

// OpenFiles returns the paths of the files process pid holds open, as the
// kernel names them (symbolic links resolved); descriptors that are no path
// (pipes, sockets) are left out.
func OpenFiles(pid int) ([]string, error) { return openFiles(pid) }

// Environ returns the environment process pid was started with (what it
// changed in itself since is not seen). A process in the middle of its
// exec has none yet: empty, and no error.
func Environ(pid int) ([]string, error) { return environ(pid) }

// tree returns root and its descendants in parents (pid => parent's pid).
// Each pid is taken once, so a damaged table (a cycle, pids reused while
// it was read) cannot loop.
func tree(root int, parents map[int]int) []int {
	children := make(map[int][]int)
	for pid, ppid := range parents {
		if pid != ppid {
			children[ppid] = append(children[ppid], pid)
		}
	}
	seen := map[int]bool{root: true}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i]] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// parseStatPPid finds the parent's pid in the text of /proc/<pid>/stat:
// "pid (comm) state ppid ...", where comm may hold any bytes, ")" and
// blanks included, so the fields are counted from its last ")".
func parseStatPPid(stat []byte) (int, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("procinfo: stat has no command name")
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 2 {
		return 0, fmt.Errorf("procinfo: stat %q is cut short", stat)
	}
	n, err := strconv.Atoi(string(fields[1]))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("procinfo: bad parent pid %q in stat", fields[1])
	}
	return n, nil
}
