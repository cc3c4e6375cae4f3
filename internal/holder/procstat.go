package holder

import (
	"errors"

	"termkeep/internal/procinfo"
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
// ppid pgrp session tty_nr tpgid …" (procinfo.StatField), without
// allocating: an input lane reads it for every key.
func parseProcStat(b []byte) (procStat, error) {
	_, st, ok := procinfo.StatField(b, 0)
	if !ok || len(st) != 1 {
		return procStat{}, errProcStat
	}
	var n [5]int // ppid, pgrp, session, tty_nr, tpgid
	for k := range n {
		_, f, ok := procinfo.StatField(b, k+1)
		v, ok2 := procinfo.Int(f)
		if !ok || !ok2 {
			return procStat{}, errProcStat
		}
		n[k] = int(v)
	}
	return procStat{state: st[0], pgrp: n[1], ttyNr: n[3], tpgid: n[4]}, nil
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
