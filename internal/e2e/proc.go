package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcStat is what /proc says about a process.
type ProcStat struct {
	RssKiB  int64
	Threads int
	Fds     int
}

// ReadProc reads a process's resident memory, threads and open files.
func ReadProc(pid int) (ProcStat, error) {
	var st ProcStat
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		switch k {
		case "VmRSS":
			st.RssKiB, _ = strconv.ParseInt(f[0], 10, 64)
		case "Threads":
			st.Threads, _ = strconv.Atoi(f[0])
		}
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return st, err
	}
	st.Fds = len(ents)
	return st, nil
}
