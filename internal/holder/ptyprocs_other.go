//go:build !linux

package holder

import "os"

// ptsDevice: unknown here; a close reaches the child's process group and
// the terminal's foreground group only.
func ptsDevice(*os.File) uint64 { return 0 }

func ptyProcesses(uint64) []int { return nil }
