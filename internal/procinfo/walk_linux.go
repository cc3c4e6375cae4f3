package procinfo

import (
	"encoding/binary"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// walker holds the buffers of Walk, reused from call to call; a scan
// reads every process's stat, and a process that scans often (a holder
// asked what its terminal's foreground does) must not allocate per
// process.
var walker struct {
	mu   sync.Mutex
	dir  [8 << 10]byte
	stat [1 << 10]byte
	path [32]byte
}

// Walk calls fn with the pid and the start of the stat text of every
// process in /proc (up to 1 KiB of it: the fields a caller reads come
// first). stat is valid only during the call. Walks are serialized; fn
// must not call Walk. It allocates nothing.
func Walk(fn func(pid int, stat []byte)) error {
	walker.mu.Lock()
	defer walker.mu.Unlock()
	dfd, err := openat(unix.AT_FDCWD, append(walker.path[:0], "/proc\x00"...), unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	for {
		n, err := unix.Getdents(dfd, walker.dir[:])
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		for b := walker.dir[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off i64, reclen u16, type u8, name.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			name := b[19:reclen]
			if k := indexNUL(name); k >= 0 {
				name = name[:k]
			}
			if pid, ok := Int(name); ok && pid > 0 && name[0] != '-' {
				if s := readStat(dfd, name); s != nil {
					fn(int(pid), s)
				}
			}
			b = b[reclen:]
		}
	}
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// readStat reads <pid>/stat under the /proc descriptor dfd into the
// walker's buffer; nil when the process is gone.
func readStat(dfd int, pid []byte) []byte {
	if len(pid)+len("/stat\x00") > len(walker.path) {
		return nil
	}
	p := append(walker.path[:0], pid...)
	p = append(p, "/stat\x00"...)
	fd, err := openat(dfd, p, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, walker.stat[:])
	if err != nil || n <= 0 {
		return nil
	}
	return walker.stat[:n]
}

// openat opens the NUL-terminated path read-only: unix.Openat would copy
// the name to the heap.
func openat(dfd int, path []byte, flags int) (int, error) {
	fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(dfd), uintptr(unsafe.Pointer(&path[0])),
		uintptr(unix.O_RDONLY|unix.O_CLOEXEC|flags), 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}
