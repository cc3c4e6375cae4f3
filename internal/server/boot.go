package server

// What the server knows of the machine's boots: each holder records the
// boot it started in (meta.json's boot_id, package bootid), so a server
// that finds a session of an earlier boot knows the machine restarted
// under it, says so (its log, a machine.restarted event, the session's
// cause), and the restore policy (restorepolicy) decides what comes back.

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"termkeep/internal/server/restorepolicy"
	"termkeep/internal/sessiondir"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// sessionMeta reads session id's meta.json; a missing or damaged one is
// the zero Meta (nothing known).
func (s *Server) sessionMeta(id string) sessiondir.Meta {
	m, _ := sessiondir.ReadMeta(s.cfg.StateDir.Session(id))
	return m
}

// restoreRecord is what the restore policy knows of sess.
// workspaceAuto says whether sess's workspace asks for auto-restore.
func (s *Server) restoreRecord(sess store.Session, workspaceAuto bool) restorepolicy.Record {
	m := s.sessionMeta(sess.ID)
	return restorepolicy.Record{
		State:       string(sess.State),
		AutoRestore: sess.AutoRestore || workspaceAuto,
		// The holder recorded the child's own exit (in meta.json or its
		// status record, at the end or while it lingered), whatever the
		// registry says (a server that gave up on a holder records
		// interrupted).
		ChildExited: m.ChildExited(),
		BootID:      m.BootID,
		Cause:       restorepolicy.Cause(sess.Cause),
	}
}

// endCause is the cause to record with an interrupted end e of session
// id (the holder's own, judged against the boots), and the reason to
// record with it: a session of an earlier boot was ended by the machine's
// restart.
func (s *Server) endCause(id string, e wire.Exit) (restorepolicy.Cause, string) {
	sessionBoot := s.sessionMeta(id).BootID
	cause := restorepolicy.CauseOf(restorepolicy.Cause(e.Cause), sessionBoot, s.boot)
	reason := e.Reason
	if r := rebootReason(cause, e.End); r != "" && sessionBoot != "" && s.boot != "" && sessionBoot != s.boot {
		reason = r
	}
	return cause, reason
}

func restartedReason(end uint64) string {
	return fmt.Sprintf("the machine restarted while it ran; output up to byte %d is kept", end)
}

// rebootReason is the reason of a session of an earlier boot whose cause
// is cause, "" when the cause says nothing of the restart.
func rebootReason(cause restorepolicy.Cause, end uint64) string {
	switch cause {
	case restorepolicy.MachineRestarted:
		return restartedReason(end)
	case restorepolicy.Shutdown:
		return fmt.Sprintf("the machine shut down and restarted while it ran; output up to byte %d is kept", end)
	}
	return ""
}

// noticeRestart is the end of recover: it gives every interrupted session
// of an earlier boot whose cause is not yet recorded (the first server of
// this boot; a holder stopped by the shutdown) the machine's restart as
// its cause, and when it finds any, says that the machine restarted, in
// the log and as one machine.restarted event. Sessions whose end this
// server recorded from an earlier boot have that cause already; they are
// named too.
func (s *Server) noticeRestart(ctx context.Context, ended map[string]bool) {
	all, err := s.store.SessionsInState(ctx, store.StateInterrupted)
	if err != nil {
		s.log.Warn("look for sessions of an earlier boot", "err", err)
		return
	}
	var ids []string
	boots := map[string]bool{}
	for _, sess := range all {
		m := s.sessionMeta(sess.ID)
		if m.BootID == "" || s.boot == "" || m.BootID == s.boot {
			continue
		}
		switch restorepolicy.Cause(sess.Cause) {
		case restorepolicy.MachineRestarted:
			if !ended[sess.ID] {
				continue // told by an earlier server of this boot
			}
		case restorepolicy.HolderKilled:
			continue // its holder died before the machine restarted
		default:
			end := m.End
			if h := s.host(sess.ID); h != nil {
				if e := h.Exit(); e != nil {
					end = max(end, e.End)
				}
			}
			// A shutdown logind announced keeps its cause; the reason
			// says the machine came back, once (SetCause's changed).
			cause := restorepolicy.MachineRestarted
			if restorepolicy.Cause(sess.Cause) == restorepolicy.Shutdown {
				cause = restorepolicy.Shutdown
			}
			changed, err := s.store.SetCause(ctx, sess.ID, string(cause), rebootReason(cause, end))
			if err != nil {
				s.log.Warn("record a session's cause", "session", sess.ID, "err", err)
				continue
			}
			if !changed && !ended[sess.ID] {
				continue
			}
		}
		ids = append(ids, sess.ID)
		boots[m.BootID] = true
	}
	if len(ids) == 0 {
		return
	}
	earlier := slices.Sorted(maps.Keys(boots))
	s.log.Warn("the machine restarted since these sessions ran: they are interrupted, and the restore policy brings back those that ask for it",
		"sessions", len(ids), "boot_id", s.boot, "earlier_boot_ids", earlier)
	s.events.emit(store.EventMachineRestarted, "", map[string]any{
		"boot_id": s.boot, "earlier_boot_ids": earlier, "sessions": ids,
	})
}
