package holder

import (
	"bytes"
	"strconv"
)

// The processes of the session's terminal: the child may leave processes
// behind that hold the pty (a job run with `trap '' HUP`, a daemon that
// called setsid but kept its standard streams). The holder reads their
// output while they do (drainOver), and a close ends them all, not only
// the child's process group and the terminal's foreground group.

// statTTY returns the controlling terminal (tty_nr, the kernel's device
// encoding; 0: none) from the text of a /proc/<pid>/stat file. The
// command name in parentheses may hold any byte, spaces and parentheses
// included, so the fields are counted from the last ')'.
func statTTY(stat []byte) (uint64, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	// After the name: state, ppid, pgrp, session, tty_nr.
	f := bytes.Fields(stat[i+1:])
	if len(f) < 5 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f[4]), 10, 64)
	if err != nil {
		return 0, false
	}
	return uint64(uint32(n)), true // printed as a signed int
}

// ttyDevice is the major and minor numbers of the kernel's encoding of a
// device number in /proc/<pid>/stat's tty_nr.
func ttyDevice(nr uint64) (major, minor uint32) {
	return uint32(nr>>8) & 0xfff, uint32(nr&0xff) | uint32(nr>>12)&0xfff00
}
