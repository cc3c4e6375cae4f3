package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/export"
	"termkeep/internal/outlog"
	"termkeep/internal/replay"
	"termkeep/internal/session"
	"termkeep/internal/statedir"
	"termkeep/internal/store"
)

// The replay endpoints (docs/protocol.md, Replay) read the session's log
// and its replay checkpoints (package replay): the timeline, the screen at
// any moment, and the output with its times for playing it back.

const (
	maxRenders       = 2       // renders at once, per server: each may read a checkpoint's spacing of log
	maxIndexes       = 32      // sessions whose scanned timeline is kept
	maxReplayHistory = 10_000  // lines of history a replay screen may carry
	defaultOutputMax = 1 << 20 // data bytes of a replay/output answer
	maxOutputMax     = 8 << 20
)

// replayer is the server's share of replay: the bound on renders, the
// timelines scanned so far, and what its endpoints read.
type replayer struct {
	renders  chan struct{} // a slot per render in progress
	indexes  *replay.Indexes
	stateDir statedir.Dir // where the sessions' logs are
	now      func() time.Time
	log      *slog.Logger
}

func newReplayer(stateDir statedir.Dir, now func() time.Time, log *slog.Logger) *replayer {
	return &replayer{
		renders: make(chan struct{}, maxRenders), indexes: replay.NewIndexes(maxIndexes),
		stateDir: stateDir, now: now, log: log,
	}
}

// render renders the moment at off once a render slot is free (or ctx
// ends).
func (rp *replayer) render(ctx context.Context, l replay.Log, dir string, off uint64) (replay.Moment, error) {
	select {
	case rp.renders <- struct{}{}:
	case <-ctx.Done():
		return replay.Moment{}, ctx.Err()
	}
	defer func() { <-rp.renders }()
	return replay.Render(l, dir, off)
}

// handleReplay answers the session's timeline (api.ReplayTimeline).
func (rp *replayer) handleReplay(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	l, err := openLog(rp.stateDir, sess)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer l.Close()
	tl, err := rp.indexes.Get(sess.ID).Timeline(l)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read the timeline of %s: %v", ref(sess), err)
		return
	}
	writeJSON(w, http.StatusOK, timelineView(sess, tl))
}

func timelineView(sess store.Session, tl replay.Timeline) api.ReplayTimeline {
	out := api.ReplayTimeline{
		ID: sess.ID, State: string(sess.State), First: tl.First, End: tl.End,
		StartT: msOr(tl.Start, sess.CreatedAt), EndT: msOr(tl.Last, sess.CreatedAt),
		Cols: int(tl.Cols), Rows: int(tl.Rows),
		Points:  make([]api.ReplayPoint, len(tl.Points)),
		Markers: make([]api.ReplayMarker, len(tl.Markers)),
	}
	for i, p := range tl.Points {
		out.Points[i] = api.ReplayPoint{Offset: p.Offset, T: p.Time.UnixMilli()}
	}
	for i, m := range tl.Markers {
		v := api.ReplayMarker{Offset: m.Offset, T: msOr(m.Time, sess.CreatedAt), Kind: string(m.Kind), Status: m.Status}
		if m.Kind != replay.KindDone {
			v.Label = &m.Label
		}
		if m.Kind == replay.KindGap {
			v.End = &m.End
		}
		out.Markers[i] = v
	}
	return out
}

// msOr is t in Unix ms, or else's when t is unknown.
func msOr(t, orElse time.Time) int64 {
	if t.IsZero() {
		return orElse.UnixMilli()
	}
	return t.UnixMilli()
}

// replayFormats are the bodies replay/screen answers with.
var replayFormats = map[string]string{
	"snapshot": "application/octet-stream",
	"text":     "text/plain; charset=utf-8",
	"ansi":     "text/plain; charset=utf-8",
}

// handleReplayScreen renders the screen at ?at= (an offset, an RFC 3339
// time, a Unix ms time written t1763700000000, or a duration before now;
// absent: the end) with up to ?scrollback= lines of history, as a
// snapshot stream (?format=snapshot, the default), text or ansi.
func (rp *replayer) handleReplayScreen(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "snapshot"
	}
	ctype, ok := replayFormats[format]
	if !ok {
		writeError(w, http.StatusBadRequest, "format=%q is not snapshot, text or ansi", format)
		return
	}
	history := 0
	if v := q.Get("scrollback"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "scrollback=%q is not a number of lines", v)
			return
		}
		history = min(n, maxReplayHistory)
	}
	l, err := openLog(rp.stateDir, sess)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer l.Close()
	at, status, err := rp.replayAt(l, q.Get("at"))
	if err != nil {
		writeError(w, status, "%v", err)
		return
	}
	m, err := rp.render(r.Context(), l, rp.stateDir.Session(sess.ID), at.off)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "render %s at offset %d: %v", ref(sess), at.off, err)
		return
	}
	moment := at.t
	if moment.IsZero() {
		moment = rp.timeBefore(l, m, sess)
	}
	cols, rows := m.Screen.Size()
	hd := w.Header()
	hd.Set("Content-Type", ctype)
	hd.Set(api.HeaderOffset, strconv.FormatUint(m.Offset, 10))
	hd.Set(api.HeaderTime, strconv.FormatInt(moment.UnixMilli(), 10))
	hd.Set(api.HeaderSize, fmt.Sprintf("%dx%d", cols, rows))
	switch format {
	case "snapshot":
		w.Write(m.Screen.Snapshot(history))
	case "text":
		io.WriteString(w, m.Screen.Text(history))
	case "ansi":
		io.WriteString(w, m.Screen.ANSI(history))
	}
}

// replayMoment is where a replay/screen request looks: an offset, and the
// time asked for when it was a time.
type replayMoment struct {
	off uint64
	t   time.Time // zero when an offset was asked for
}

// replayAt resolves ?at= in l. A time is the moment after every byte
// logged at or before it (a Unix ms time: before its millisecond ended);
// a position before the oldest retained byte is that byte; a position
// past the end is an error with status 416.
func (rp *replayer) replayAt(l *outlog.Log, v string) (replayMoment, int, error) {
	first, end := l.First(), l.End()
	if v == "" {
		return replayMoment{off: end}, 0, nil
	}
	now := rp.now()
	b, last, err := parseMoment(v, now)
	if err != nil {
		return replayMoment{}, http.StatusBadRequest, fmt.Errorf("at: %v", err)
	}
	if !b.IsTime {
		if b.Offset > end {
			return replayMoment{}, http.StatusRequestedRangeNotSatisfiable,
				fmt.Errorf("offset %d is beyond the end of the output (%d)", b.Offset, end)
		}
		return replayMoment{off: max(b.Offset, first)}, 0, nil
	}
	if b.Time.After(now) && b.Time.After(lastLogged(l)) {
		return replayMoment{}, http.StatusRequestedRangeNotSatisfiable,
			fmt.Errorf("%s is in the future", b.Time.Format(time.RFC3339Nano))
	}
	off, err := l.OffsetAt(last.Add(time.Nanosecond))
	if err != nil {
		return replayMoment{}, http.StatusInternalServerError, err
	}
	return replayMoment{off: off, t: b.Time}, 0, nil
}

// lastLogged is the log time of the newest byte of l, or the zero time.
// It can be later than the clock now: log times go on from before a clock
// was set back (outlog), and a moment the log shows is no future one.
func lastLogged(l *outlog.Log) time.Time {
	end := l.End()
	if end == l.First() {
		return time.Time{}
	}
	t, _ := replay.TimeOf(l, end-1)
	return t
}

// parseMoment reads ?at=: "t" and Unix ms digits, else what export's
// bounds take (an offset, an RFC 3339 time, a duration before now). last
// is the latest instant the time covers: the end of its millisecond for
// the ms form.
func parseMoment(v string, now time.Time) (b export.Bound, last time.Time, err error) {
	if ms, ok := strings.CutPrefix(v, "t"); ok && ms != "" && strings.Trim(ms, "0123456789") == "" {
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil {
			return b, last, fmt.Errorf("%q is not a Unix time in milliseconds", v)
		}
		t := time.UnixMilli(n)
		return export.Bound{Time: t, IsTime: true}, t.Add(time.Millisecond - 1), nil
	}
	b, err = export.ParseBound(v, now)
	return b, b.Time, err
}

// timeBefore is when the byte before the moment m was logged: m's own time,
// else (nothing before it is retained) when the oldest retained byte was,
// else when the session was created.
func (rp *replayer) timeBefore(l *outlog.Log, m replay.Moment, sess store.Session) time.Time {
	if !m.Time.IsZero() {
		return m.Time
	}
	if first := l.First(); first < l.End() {
		if t, err := replay.TimeOf(l, first); err == nil && !t.IsZero() {
			return t
		}
	}
	return sess.CreatedAt
}

// handleReplayOutput streams the log from ?from= (default: the oldest
// retained byte) to ?to= (default: the end) as JSON lines
// (api.ReplayStep), at most ?max= data bytes (default 1 MiB) in one
// answer, ending with where to go on.
func (rp *replayer) handleReplayOutput(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	q := r.URL.Query()
	l, err := openLog(rp.stateDir, sess)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer l.Close()
	first, end := l.First(), l.End()
	from, to, limit := first, end, defaultOutputMax
	for _, p := range []struct {
		name string
		v    *uint64
	}{{"from", &from}, {"to", &to}} {
		if v := q.Get(p.name); v != "" {
			if *p.v, err = strconv.ParseUint(v, 10, 64); err != nil {
				writeError(w, http.StatusBadRequest, "%s=%q is not an offset", p.name, v)
				return
			}
		}
	}
	if v := q.Get("max"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit <= 0 {
			writeError(w, http.StatusBadRequest, "max=%q is not a number of bytes", v)
			return
		}
		limit = min(limit, maxOutputMax)
	}
	if from > end {
		writeError(w, http.StatusRequestedRangeNotSatisfiable, "offset %d is beyond the end of the output (%d)", from, end)
		return
	}
	from = max(from, first)
	if to < from {
		writeError(w, http.StatusBadRequest, "to=%d is before from=%d", to, from)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Trailer", api.HeaderError)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	next, err := replay.Output(l, from, to, limit, func(c outlog.Chunk) error { return enc.Encode(replayStep(c)) })
	if err == nil {
		done := next >= min(to, end)
		err = enc.Encode(api.ReplayStep{Next: &next, Done: &done})
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		rp.log.Warn("replay output cut short", "session", sess.ID, "err", err)
		w.Header().Set(api.HeaderError, err.Error())
	}
}

// replayStep is a chunk of the log as a line of replay/output.
func replayStep(c outlog.Chunk) api.ReplayStep {
	off := c.Offset
	st := api.ReplayStep{Offset: &off}
	if !c.Time.IsZero() {
		t := c.Time.UnixMilli()
		st.T = &t
	}
	switch c.Kind {
	case outlog.ChunkSize:
		st.Cols, st.Rows = int(c.Cols), int(c.Rows)
	case outlog.ChunkData:
		st.Data = c.Data
	case outlog.ChunkGap:
		end := c.End
		st.End, st.Gap = &end, outlog.GapOf(c).Reason
	}
	return st
}
