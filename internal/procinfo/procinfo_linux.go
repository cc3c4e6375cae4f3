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
