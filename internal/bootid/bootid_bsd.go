//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package bootid

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// system names the boot by its time (kern.boottime), to the second: these
// systems have no boot id, and the boot time changes only with a boot.
func system() (string, error) {
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return "", fmt.Errorf("bootid: kern.boottime: %w", err)
	}
	return fmt.Sprintf("boottime-%d", tv.Sec), nil
}
