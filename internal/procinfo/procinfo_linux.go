package procinfo

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

func cwd(pid int) (string, error) {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		return "", fmt.Errorf("procinfo: working directory of %d: %w", pid, err)
	}
	return p, nil
}

func cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, fmt.Errorf("procinfo: command line of %d: %w", pid, err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

func parent(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("procinfo: parent of %d: %w", pid, err)
	}
	return parsePPid(b)
}

func descendants(pid int) ([]int, error) {
	// The root must exist: a session whose child is gone has no processes.
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		return nil, fmt.Errorf("procinfo: descendants of %d: %w", pid, err)
	}
	names, err := readNames("/proc")
	if err != nil {
		return nil, fmt.Errorf("procinfo: descendants of %d: %w", pid, err)
	}
	parents := make(map[int]int, len(names))
	for _, name := range names {
		p, err := strconv.Atoi(name)
		if err != nil || p <= 0 {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // it ended while the list was read
		}
		if ppid, err := parseStatPPid(b); err == nil {
			parents[p] = ppid
		}
	}
	return tree(pid, parents), nil
}

func openFiles(pid int) ([]string, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	names, err := readNames(dir)
	if err != nil {
		return nil, fmt.Errorf("procinfo: open files of %d: %w", pid, err)
	}
	var paths []string
	for _, name := range names {
		p, err := os.Readlink(dir + "/" + name)
		if err != nil || !strings.HasPrefix(p, "/") {
			continue // closed meanwhile, or a pipe, socket or anon_inode
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func environ(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil, fmt.Errorf("procinfo: environment of %d: %w", pid, err)
	}
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// readNames lists a directory's entries without stat-ing each.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

func terminal(pid int) (major, minor uint32, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	nr, ok := StatTTY(b)
	if !ok || nr == 0 {
		return 0, 0, false
	}
	major, minor = TTYDevice(nr)
	return major, minor, true
}
