package server

// What the server knows of the machine's boots: each holder records the
// boot it started in (meta.json's boot_id, package bootid), so a server
// that finds a session of an earlier boot knows the machine restarted
// under it, says so (its log, a machine.restarted event, the session's
// cause), and the restore policy (restorepolicy) decides what comes back.

import (
	"context"
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

// endCause is the cause and reason to record with an interrupted end e of
// session id (restorepolicy.InterruptedEnd).
func (s *Server) endCause(id string, e wire.Exit) (restorepolicy.Cause, string) {
	return restorepolicy.InterruptedEnd(restorepolicy.Cause(e.Cause), e.Reason, e.End, s.sessionMeta(id).BootID, s.boot)
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
		n := restorepolicy.NoticeRestart(restorepolicy.Cause(sess.Cause), m.BootID, s.boot, ended[sess.ID])
		if n.Set != restorepolicy.Unknown {
			end := m.End
			if h := s.host(sess.ID); h != nil {
				if e := h.Exit(); e != nil {
					end = max(end, e.End)
				}
			}
			changed, err := s.store.SetCause(ctx, sess.ID, string(n.Set), restorepolicy.RebootReason(n.Set, end))
			if err != nil {
				s.log.Warn("record a session's cause", "session", sess.ID, "err", err)
				continue
			}
			n.Name = n.Name || changed
		}
		if !n.Name {
			continue
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
