// Package bootid names the machine's current boot, so that a session's
// record can say which boot it ran in and a server can tell a session the
// machine's restart ended from one whose holder alone died.
//
// On Linux the name is the kernel's boot id, a random UUID made at every
// boot (/proc/sys/kernel/random/boot_id). Elsewhere it is the system's boot
// time, to the second. $TERMKEEP_BOOT_ID_FILE names another file to read
// the id from (tests point it at a file of their own to play a reboot).
package bootid

import (
	"fmt"
	"os"
	"strings"
)

// EnvVar names a file whose contents replace the system's boot id.
const EnvVar = "TERMKEEP_BOOT_ID_FILE"

// maxLen bounds what is read from the file: a boot id is 36 bytes.
const maxLen = 128

// Current returns the current boot's id, read from $TERMKEEP_BOOT_ID_FILE
// when it is set, else from the system. An error means the boot is not
// known; callers then compare nothing.
func Current() (string, error) {
	if p := os.Getenv(EnvVar); p != "" {
		return readFile(p)
	}
	return system()
}

// readFile reads a boot id from path: its first line, trimmed, at most
// maxLen bytes, and not empty.
func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("bootid: %w", err)
	}
	return parse(path, b)
}

// parse is readFile's check of the file's contents b.
func parse(path string, b []byte) (string, error) {
	line, _, _ := strings.Cut(string(b), "\n")
	id := strings.TrimSpace(line)
	switch {
	case id == "":
		return "", fmt.Errorf("bootid: %s holds no boot id", path)
	case len(id) > maxLen:
		return "", fmt.Errorf("bootid: %s holds a line of %d bytes, longer than any boot id", path, len(id))
	case strings.ContainsFunc(id, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return "", fmt.Errorf("bootid: %s holds control characters, not a boot id", path)
	}
	return id, nil
}
