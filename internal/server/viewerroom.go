package server

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// viewerFiles is what a viewer may hold beyond its own connection: the log
// segment a replay from behind the in-memory window reads, kept open while
// the viewer is slow to take it.
const viewerFiles = 1

// viewerRoom decides whether the server may serve one more viewer: with
// open descriptors open now (the viewer's connection among them) and a
// file limit of limit (0: unlimited or unknown), the viewer's log segment
// must still leave filesReserve free for the CLI's requests, as a session
// start does (rlimit.go). Without it, viewers that replay a log and read
// slowly take two descriptors each until the server has none left to
// accept `termkeep ls` with. Browsers meet a larger reserve first, when the
// listener accepts their connection (gatelistener.go).
func viewerRoom(open, limit uint64) bool {
	return limit == 0 || (open <= limit && limit-open >= viewerFiles+filesReserve)
}

// roomForViewer refuses a viewer, before its connection is upgraded, when
// viewerRoom says no, with a sentence naming the limit.
func roomForViewer() error {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Cur == unix.RLIM_INFINITY {
		return nil
	}
	open, err := openFiles()
	if err != nil {
		if outOfFiles(err) {
			return filesError(err)
		}
		return nil // nothing to count by (no /proc)
	}
	if viewerRoom(uint64(open), lim.Cur) {
		return nil
	}
	return &LimitError{Resource: "files", msg: fmt.Sprintf("too many open files: the server's file limit (ulimit -n) is %d and %d are open, "+
		"too few to serve another viewer and keep %d for commands; raise it where termkeep serve starts "+
		"(ulimit -n, or LimitNOFILE= in a systemd unit) and restart the server, or detach viewers you no longer need",
		lim.Cur, open, filesReserve)}
}
