package main

import (
	"context"
	"os"

	"golang.org/x/sys/unix"

	"termkeep/internal/client"
	"termkeep/internal/procinfo"
)

// refuseNesting returns a usage error when in, attach's terminal, is
// session ref's own: the session would be drawn inside itself, its output
// fed back into it, as tmux refuses to nest. The session's terminal is
// its child's controlling one (procinfo.Terminal: Linux; elsewhere
// nothing is refused). TERMKEEP_SESSION only says whether to look, to
// spare attach a round trip outside any session: carried into another
// terminal, it refuses nothing.
func refuseNesting(ctx context.Context, c *client.Client, ref string, in *os.File) error {
	if os.Getenv("TERMKEEP_SESSION") == "" {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(in.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return nil
	}
	s, err := c.Get(ctx, ref)
	if err != nil || s.Pid == nil {
		return nil // attach itself says what is wrong
	}
	major, minor, ok := procinfo.Terminal(*s.Pid)
	if !ok || major != unix.Major(uint64(st.Rdev)) || minor != unix.Minor(uint64(st.Rdev)) {
		return nil
	}
	name := s.Name
	if name == "" {
		name = s.ID
	}
	return usageErr("this terminal is session %s's own: attach from another terminal", name)
}
