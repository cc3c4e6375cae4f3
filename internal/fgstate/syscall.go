package fgstate

import (
	"bytes"
	"strconv"

	"termkeep/internal/procinfo"
)

// parseSyscall reads /proc/PID/syscall: "running" for a thread on a CPU,
// else the system call's number and its arguments in hex ("-1 sp pc" for
// one blocked outside a system call). ok is false for text of another
// shape.
func parseSyscall(b []byte) (running bool, nr int, arg0 uint64, ok bool) {
	f := bytes.Fields(b)
	if len(f) == 1 && string(f[0]) == "running" {
		return true, 0, 0, true
	}
	if len(f) == 0 {
		return false, 0, 0, false
	}
	n, err := strconv.Atoi(string(f[0]))
	if err != nil || n < -1 {
		return false, 0, 0, false
	}
	if n == -1 || len(f) < 2 {
		return false, n, 0, n == -1
	}
	a, ok := parseHex(f[1])
	return false, n, a, ok
}

func parseHex(b []byte) (uint64, bool) {
	b, ok := bytes.CutPrefix(b, []byte("0x"))
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b), 16, 64)
	return v, err == nil
}

// callOf is the kind of system call nr is on this architecture (calls,
// in sysnum_*.go); ok is false where there is no table.
func callOf(nr int) (c Call, ok bool) {
	if calls == nil {
		return CallOther, false
	}
	return calls[nr], true
}

// statFields reads the start of /proc/PID/stat, "pid (comm) state ppid
// pgrp …", without allocating (procinfo.StatField).
func statFields(b []byte) (comm []byte, state byte, pgrp int, ok bool) {
	comm, st, ok1 := procinfo.StatField(b, 0)
	_, g, ok2 := procinfo.StatField(b, 2)
	n, ok3 := procinfo.Int(g)
	if !ok1 || !ok2 || !ok3 || len(st) != 1 || n < 0 {
		return nil, 0, 0, false
	}
	return comm, st[0], int(n), true
}
