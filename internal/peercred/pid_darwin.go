package peercred

import "golang.org/x/sys/unix"

func fdPID(fd int) (int, error) { return unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID) }
