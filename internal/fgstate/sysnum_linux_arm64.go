package fgstate

import "golang.org/x/sys/unix"

// calls is this architecture's system calls that wait for input (arm64
// has no poll, select or epoll_wait: libc calls the p- variants).
var calls = map[int]Call{
	unix.SYS_READ: CallRead, unix.SYS_READV: CallRead, unix.SYS_PREAD64: CallRead,
	unix.SYS_PREADV: CallRead, unix.SYS_PREADV2: CallRead,
	unix.SYS_PPOLL: CallPoll, unix.SYS_PSELECT6: CallPoll,
	unix.SYS_EPOLL_PWAIT: CallPoll, unix.SYS_EPOLL_PWAIT2: CallPoll,
}
