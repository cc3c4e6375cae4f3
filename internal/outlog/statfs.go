//go:build unix

package outlog

import "golang.org/x/sys/unix"

// freeSpace returns the bytes an unprivileged writer may still use on the
// file system holding dir.
func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
