//go:build !linux

package main

import (
	"errors"
	"os"
	"time"
)

// Without /proc the CPU breakdown and the memory figures are reported as
// unavailable; throughput is still measured.
var errNoProc = errors.New("unavailable (no /proc on this system)")

func procCPU(pid int) (self, children time.Duration, err error) { return 0, 0, errNoProc }

type memory struct {
	Rss, Pss, Private int64
}

func procMemory(pid int) (memory, error) { return memory{}, errNoProc }

func procCmdline(pid int) string { return "" }

func machineBusy() (time.Duration, error) { return 0, errNoProc }

func kernelWorkers() (time.Duration, error) { return 0, errNoProc }

func firstChild(pid int) int { return 0 }

// ptyEcho cannot tell without the Linux ioctl: assume raw mode is set.
func ptyEcho(f *os.File) (bool, error) { return false, nil }

func pidsWithCmdline(sub string) []int { return nil }

func procRuntime(pid int) (time.Duration, error) { return 0, errNoProc }
