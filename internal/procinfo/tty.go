package procinfo

// Terminal returns the device numbers of process pid's controlling
// terminal; ok is false when it has none or the system does not say.
func Terminal(pid int) (major, minor uint32, ok bool) { return terminal(pid) }

// StatTTY returns the controlling terminal (tty_nr, the kernel's device
// encoding; 0: none) from the text of a /proc/<pid>/stat file. The
// command name in parentheses may hold any byte, spaces and parentheses
// included, so the fields are counted from the last ')'.
func StatTTY(stat []byte) (uint64, bool) {
	_, f, ok := StatField(stat, 4) // state, ppid, pgrp, session, tty_nr
	if !ok {
		return 0, false
	}
	n, ok := Int(f)
	if !ok {
		return 0, false
	}
	return uint64(uint32(n)), true // printed as a signed int
}

// TTYDevice is the major and minor numbers of the kernel's encoding of a
// device number in /proc/<pid>/stat's tty_nr.
func TTYDevice(nr uint64) (major, minor uint32) {
	return uint32(nr>>8) & 0xfff, uint32(nr&0xff) | uint32(nr>>12)&0xfff00
}
