package holder

import (
	"bytes"
	"errors"
	"strconv"
)

// procStat is what /proc/<pid>/stat says of a process that bears on
// reading its terminal for it.
type procStat struct {
	state byte // R, S, D, T (stopped), t (traced), Z, X, …
	pgrp  int
	ttyNr int // its controlling terminal's device number (0: none)
	tpgid int // the foreground process group of that terminal (-1: none)
}

var errProcStat = errors.New("holder: malformed /proc stat")

// parseProcStat decodes the start of /proc/<pid>/stat: "pid (comm) state
// ppid pgrp session tty_nr tpgid …". comm may hold spaces and parentheses,
// so the fields are counted from its last ')'.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errProcStat
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 6 || len(f[0]) != 1 {
		return procStat{}, errProcStat
	}
	var n [5]int
	for k := range n {
		v, err := strconv.Atoi(string(f[k+1]))
		if err != nil {
			return procStat{}, errProcStat
		}
		n[k] = v
	}
	// n: ppid, pgrp, session, tty_nr, tpgid
	return procStat{state: f[0][0], pgrp: n[1], ttyNr: n[3], tpgid: n[4]}, nil
}

// foreground reports whether a process in state s may have its terminal,
// of device number rdev, read for it: it is alive and not stopped, that
// terminal is its controlling one, and its process group is in the
// foreground there. A process stopped (Ctrl-Z from outside, SIGSTOP), put
// in the background or gone has given its terminal back to its shell.
func (s procStat) foreground(rdev uint64) bool {
	switch s.state {
	case 'T', 't', 'Z', 'X', 'x':
		return false
	}
	return s.ttyNr != 0 && uint64(uint32(s.ttyNr)) == rdev && s.tpgid > 0 && s.tpgid == s.pgrp
}
