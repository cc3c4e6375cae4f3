package session

import (
	"cmp"
	"slices"

	"termkeep/internal/session/sizepolicy"
	"termkeep/internal/wire"
)

// room is the set of viewers attached to a session, and the list a
// Viewers frame shows of them. It is guarded by Host.mu, as the viewers
// frame is read with the session's size and its holder's state, and the
// size policy decides on the viewers at every keystroke.
type room struct {
	viewers map[*viewer]struct{}
	seq     int    // the id of the viewer last added
	ver     uint64 // bumped when viewers come and go or what the frame shows changes
	// list is the viewers frame's list as of listVer: built once per
	// change, not once per viewer told, which a crowd of n viewers would
	// pay n times over. Frames share it: never changed once built.
	list    []wire.ViewerInfo
	listVer uint64
}

// add adds v and gives it its id.
func (r *room) add(v *viewer) {
	if r.viewers == nil {
		r.viewers = make(map[*viewer]struct{})
	}
	r.seq++
	v.id = r.seq
	v.sz.ID = v.id
	r.viewers[v] = struct{}{}
}

// members returns the viewers for which keep is true.
func (r *room) members(keep func(*viewer) bool) []*viewer {
	var vs []*viewer
	for v := range r.viewers {
		if keep(v) {
			vs = append(vs, v)
		}
	}
	return vs
}

// infos returns the viewers as the frame lists them, sorted by id.
func (r *room) infos() []wire.ViewerInfo {
	if r.list == nil || r.listVer != r.ver {
		list := make([]wire.ViewerInfo, 0, len(r.viewers))
		for v := range r.viewers {
			list = append(list, wire.ViewerInfo{
				ID: v.id, Kind: v.opts.Kind, Name: v.name, ReadOnly: v.readOnly, IgnoreSize: v.sz.IgnoreSize,
				Cols: v.sz.Cols, Rows: v.sz.Rows,
			})
		}
		slices.SortFunc(list, func(a, b wire.ViewerInfo) int { return a.ID - b.ID })
		r.list, r.listVer = list, r.ver
	}
	return r.list
}

// Viewers returns who is attached. Its list is shared with the host's
// frames: read it, never change it.
func (h *Host) Viewers() wire.Viewers {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.viewersLocked()
}

func (h *Host) viewersChangedLocked() {
	h.room.ver++
	h.wakeLocked()
	if o := h.lanes.get(); o != nil {
		o.lane.wake() // a size change may revoke its lane
	}
}

func (h *Host) addViewer(v *viewer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.room.add(v)
	h.q.attach(v.id, !v.readOnly)
	h.usage.viewersChanged(len(h.room.viewers), h.now())
	h.viewersChangedLocked()
}

func (h *Host) removeViewer(v *viewer) {
	now := h.now()
	h.mu.Lock()
	delete(h.room.viewers, v)
	// Questions a writable viewer was to answer, and that no writable
	// viewer left will see, are answered from the model.
	orphans := h.q.leave(v.id, now)
	h.usage.viewersChanged(len(h.room.viewers), now)
	// The size passes on (to the most recently active writable viewer
	// left, under latest): one Viewers frame says both.
	_, h.size.owner = sizepolicy.Decide(h.size.policy, h.size.fixed, h.size.viewers(&h.room))
	h.viewersChangedLocked()
	h.mu.Unlock()
	for _, q := range orphans {
		h.modelAnswers(q)
	}
	h.applySizePolicy()
}

func (h *Host) viewersLocked() wire.Viewers {
	out := wire.Viewers{Viewers: h.room.infos(), Cols: h.size.cols, Rows: h.size.rows}
	out.SizePolicy = string(cmp.Or(h.size.policy, sizepolicy.Latest))
	out.SizeOwner = h.size.owner
	out.HolderUnresponsive = !h.health.unresponsive.IsZero() && h.exit == nil
	return out
}
