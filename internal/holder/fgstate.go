package holder

import (
	"termkeep/internal/fgstate"
	"termkeep/internal/wire"
)

// answerFgQuery answers a server's fg-query with what the kernel says of
// the pty's foreground group (package fgstate). It reads /proc, which
// takes a few milliseconds: it runs beside the connection's reader, so
// typing never waits for it, and the connection's serve waits for it
// before it ends.
func (u *upstream) answerFgQuery(id uint64) {
	u.looks.Add(1)
	go func() {
		defer u.looks.Done()
		h := u.h
		f := fgstate.Facts{Unread: -1}
		control(h.ptmx, func(fd int) error {
			f = fgstate.Look(fd, h.cmd.Process.Pid)
			return nil
		})
		u.send(func(w *wire.Writer) error { return w.FgState(fgFrame(id, f)) })
	}()
}

// fgFrame is the fg-state frame answering query id with f.
func fgFrame(id uint64, f fgstate.Facts) wire.FgState {
	s := wire.FgState{ID: id, Kind: wire.FgKind(f.State), Shell: f.Shell, Pgrp: uint32(max(f.Pgrp, 0)),
		LeaderComm: f.LeaderComm, Pid: uint32(max(f.Pid, 0)), Comm: f.Comm}
	if f.Unread >= 0 {
		s.Unread, s.UnreadKnown = uint32(f.Unread), true
	}
	return s
}
