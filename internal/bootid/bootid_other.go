//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package bootid

import "errors"

// system knows no boot on other systems: nothing is compared.
func system() (string, error) { return "", errors.New("bootid: this system's boot is not known") }
