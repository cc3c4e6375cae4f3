package server

// Ending a session on purpose: ask its holder, and when the holder does
// not answer or does not end, SIGKILL it (holderwatch.Kill decides).

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/holder"
	"termkeep/internal/procinfo"
	"termkeep/internal/session"
	"termkeep/internal/session/holderwatch"
	"termkeep/internal/sessiondir"
)

// kill ends a session on purpose and waits for its end.
func (s *Server) kill(h *session.Host) error {
	_, err := s.endSession(h)
	return err
}

// killLook is how often a kill that waits looks at its holder's state.
const killLook = 250 * time.Millisecond

// endSession ends a session on purpose and waits for its end: its holder
// is asked to close it (SIGHUP to its processes, SIGKILL after the grace
// period); a holder that cannot be asked, does not answer, or does not end
// is sent SIGKILL itself, with the session's processes. forced says so,
// in words for the user, when that happened ("" when asking was enough).
func (s *Server) endSession(h *session.Host) (forced string, err error) {
	if h.Exit() != nil {
		return "", nil
	}
	asked := holderwatch.ByFrame
	if err := h.Kill(s.cfg.KillGrace); err != nil && !errors.Is(err, session.ErrEnded) {
		// The holder is unreachable or not taking writes: ask its process
		// directly.
		asked = holderwatch.NotAsked
		if s.signalClose(h.ID) {
			asked = holderwatch.BySignal
		}
	}
	k := holderwatch.NewKill(asked, time.Now(), s.cfg.KillGrace)
	var killed killReport
	for {
		step := k.Next(time.Now(), h.Exit() != nil, !h.Info().UnresponsiveSince.IsZero())
		switch step.Action {
		case holderwatch.Done:
			// The host records the end right after Ended closes, in its
			// own goroutine; record it here as well (the first ending
			// wins) so a caller that reads the registry next sees the
			// session ended.
			if e := h.Exit(); e != nil {
				s.recordEnd(h.ID, *e)
			}
			return killed.text, nil
		case holderwatch.SIGKILL:
			killed = s.killHolder(h, step.Why)
			k.Killed(time.Now())
		case holderwatch.GiveUp:
			if killed.holderPid == 0 {
				return killed.text, fmt.Errorf("session %s has not ended: %s", h.ID, killed.text)
			}
			return killed.text, fmt.Errorf("session %s did not end within %s of SIGKILL to its holder (pid %d)", h.ID, holderwatch.KillWait, killed.holderPid)
		case holderwatch.Wait:
			if esc, _ := k.Escalated(); esc {
				h.EndIfGone()
			}
			select {
			case <-h.Ended():
			case <-time.After(min(max(time.Until(step.Until), 0), killLook)):
			}
		}
	}
}

// killReport is what killHolder did.
type killReport struct {
	holderPid int    // the holder sent SIGKILL (0: none found)
	text      string // for the user and the session's reason
}

// killHolder sends SIGKILL to session h's processes (the process group of
// its child, when the holder is still its parent) and to its holder's
// process group, and records why as the session's close reason. Only a
// pid that is still a holder is killed: pids are reused.
func (s *Server) killHolder(h *session.Host, why holderwatch.Why) killReport {
	dir := s.cfg.StateDir.Session(h.ID)
	pid, child := holderPids(dir)
	if pid <= 0 || !holder.IsHolder(pid) {
		r := killReport{text: fmt.Sprintf("its holder %s, and no running holder was found to SIGKILL", why)}
		s.log.Warn("kill: no holder to SIGKILL", "session", h.ID, "why", why.String())
		return r
	}
	what := "the holder"
	// The child first, while its parent (the holder) keeps its pid from
	// being reused: stopped, it cannot reap it.
	if child = cmp.Or(child, h.Info().Pid); child > 0 {
		if ppid, err := procinfo.Parent(child); err == nil && ppid == pid && unix.Kill(-child, unix.SIGKILL) == nil {
			what = "the holder and the session's processes"
		}
	}
	target := groupOf(pid)
	r := killReport{holderPid: pid, text: fmt.Sprintf("its holder (pid %d) %s; termkeep sent SIGKILL to %s", pid, why, what)}
	// Set before the SIGKILL: the end it causes may be recorded at once.
	h.SetCloseReason("killed: " + r.text)
	if err := unix.Kill(target, unix.SIGKILL); err != nil {
		r.text = fmt.Sprintf("its holder (pid %d) %s; SIGKILL to it failed: %v", pid, why, err)
		h.SetCloseReason(r.text)
	}
	s.log.Warn("kill: SIGKILL to a holder", "session", h.ID, "pid", pid, "why", why.String())
	return r
}

// holderEndWait is how long the removal of a session waits for its
// holder to end on its own, and then after a SIGKILL.
const holderEndWait = 2 * time.Second

// holderGone waits until no holder holds session id's directory, so that
// its removal does not race the holder's last writes (its status, the
// log's close). A holder still there after holderEndWait lingers after
// its child's end, reading what the processes left behind print into a
// log about to be removed: it is sent SIGKILL.
func (s *Server) holderGone(id string) {
	dir := s.cfg.StateDir.Session(id)
	free := func(wait time.Duration) bool {
		deadline := time.Now().Add(wait)
		for {
			if held, _ := sessiondir.LockHeld(dir); !held {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if free(holderEndWait) {
		return
	}
	// The lock file names the process that holds the lock.
	pid := lockPid(dir)
	if pid <= 0 {
		return
	}
	s.log.Warn("remove: SIGKILL to a holder still running for a removed session", "session", id, "pid", pid)
	unix.Kill(groupOf(pid), unix.SIGKILL)
	if !free(holderEndWait) {
		s.log.Error("remove: the holder still holds the session's directory", "session", id, "pid", pid)
	}
}

// holderPids is the holder's pid and its child's, from meta.json, or the
// holder's alone from its lock file when meta.json cannot be read.
func holderPids(dir string) (holderPid, childPid int) {
	if m, err := sessiondir.ReadMeta(dir); err == nil && m.HolderPid > 0 {
		return m.HolderPid, m.Pid
	}
	return lockPid(dir), 0
}

// lockPid is the pid the holder that took dir's lock wrote in it (0: none).
func lockPid(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, sessiondir.LockFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// groupOf is what to signal to reach holder pid: its process group when
// it leads one (a holder leads its own session and group), else pid.
func groupOf(pid int) int {
	if pg, err := unix.Getpgid(pid); err == nil && pg == pid {
		return -pid
	}
	return pid
}
