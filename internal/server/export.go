package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/export"
	"termkeep/internal/outlog"
	"termkeep/internal/session"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
	"termkeep/internal/store"
)

// maxGapsListed bounds the gaps an export's trailer lists.
const maxGapsListed = 100

// openLog opens a session's output log read-only.
func openLog(stateDir statedir.Dir, sess store.Session) (*outlog.Log, error) {
	l, err := outlog.Open(filepath.Join(stateDir.Session(sess.ID), sessiondir.LogDir), outlog.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("open output log: %w", err)
	}
	return l, nil
}

// handleExport streams the session's log, or a range of it, in a format
// (package export): ?format=cast|txt|html|raw, ?from= and ?to= (an offset,
// an RFC 3339 time or a duration before now; default: all that is
// retained), ?redact=0|1 (default: on except for raw) and ?pattern=RE
// (repeatable: more secrets to hide; implies redact). Gaps follow in the
// HeaderGaps trailer, an error after the answer began in HeaderError.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	q := r.URL.Query()
	format, err := export.ParseFormat(q.Get("format"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	redact := format.RedactsByDefault()
	if v := q.Get("redact"); v != "" {
		if redact, err = strconv.ParseBool(v); err != nil {
			writeError(w, http.StatusBadRequest, "redact=%q is not true or false", v)
			return
		}
	}
	patterns := q["pattern"]
	if len(patterns) > 0 {
		if q.Get("redact") != "" && !redact {
			writeError(w, http.StatusBadRequest, "redaction patterns were given with redaction turned off")
			return
		}
		redact = true
	}
	var red *export.Redactor
	if redact {
		if red, err = export.NewRedactor(patterns...); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	}
	maxLines := 0 // export.DefaultMaxLines
	if v := q.Get("max_lines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "max_lines=%q is not a number of lines (0: no limit)", v)
			return
		}
		if maxLines = n; n == 0 {
			maxLines = -1
		}
		if format != export.Text && format != export.HTML {
			writeError(w, http.StatusBadRequest, "max_lines bounds the history of txt and html; a %s export has none", format)
			return
		}
	}
	l, err := openLog(s.cfg.StateDir, sess)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer l.Close()
	// By default from the session's first byte: what retention dropped is
	// marked at the start, never silently left out.
	end := l.End()
	from, to := uint64(0), end
	for _, b := range []struct {
		name string
		off  *uint64
	}{{"from", &from}, {"to", &to}} {
		v := q.Get(b.name)
		if v == "" {
			continue
		}
		bound, err := export.ParseBound(v, s.cfg.Now())
		if err != nil {
			writeError(w, http.StatusBadRequest, "--%s: %v", b.name, err)
			return
		}
		if *b.off, err = bound.Resolve(l); err != nil {
			writeError(w, http.StatusInternalServerError, "--%s: %v", b.name, err)
			return
		}
	}
	to = min(to, end)
	if from > end {
		writeError(w, http.StatusRequestedRangeNotSatisfiable, "--from %d is beyond the end of the output (%d)", from, end)
		return
	}
	if from > to {
		writeError(w, http.StatusBadRequest, "--from (offset %d) is after --to (offset %d)", from, to)
		return
	}

	opts := export.Options{Format: format, From: from, To: to, Redactor: red, Title: ref(sess), MaxLines: maxLines}
	if meta, err := sessiondir.ReadMeta(s.cfg.StateDir.Session(sess.ID)); err == nil {
		opts.Shell = envValue(meta.Env, "SHELL")
	}
	ew := &exportWriter{w: w, final: http.Header{
		"Content-Type":        {format.ContentType()},
		"Content-Disposition": {mime.FormatMediaType("attachment", map[string]string{"filename": ref(sess) + "." + string(format)})},
		api.HeaderExportFrom:  {strconv.FormatUint(from, 10)},
		api.HeaderExportTo:    {strconv.FormatUint(to, 10)},
		"Trailer":             {api.HeaderGaps + ", " + api.HeaderLinesLeftOut + ", " + api.HeaderError},
	}}
	opts.Progress = ew.progress
	res, err := export.Export(ew, l, opts)
	if err != nil && !ew.started {
		writeError(w, http.StatusInternalServerError, "export %s: %v", ref(sess), err)
		return
	}
	ew.start()
	if err != nil {
		s.log.Warn("export cut short", "session", sess.ID, "format", format, "err", err)
		w.Header().Set(api.HeaderError, err.Error())
	}
	var gaps []string
	for _, g := range res.Gaps[:min(len(res.Gaps), maxGapsListed)] {
		gaps = append(gaps, api.FormatGap(g.Start, g.End, g.Reason))
	}
	if len(gaps) > 0 {
		w.Header().Set(api.HeaderGaps, strings.Join(gaps, ", "))
	}
	if res.LinesLeftOut > 0 {
		w.Header().Set(api.HeaderLinesLeftOut, strconv.Itoa(res.LinesLeftOut))
	}
}

// exportWriter answers an export: 102 (Processing) answers with its
// progress while nothing is written, then the final answer with the
// headers in final at the first byte.
type exportWriter struct {
	w           http.ResponseWriter
	final       http.Header
	started     bool
	done, total uint64
	last        time.Time // of the last 102
}

// progressEvery spaces the 102 answers.
const progressEvery = 250 * time.Millisecond

func (e *exportWriter) progress(done, total uint64) {
	e.done, e.total = done, total
	if e.started {
		return
	}
	now := time.Now()
	if e.last.IsZero() {
		e.last = now // the first comes after a while: a quick export needs none
		return
	}
	if now.Sub(e.last) < progressEvery {
		return
	}
	e.last = now
	h := e.w.Header()
	h.Set(api.HeaderProgress, api.FormatProgress(done, total))
	e.w.WriteHeader(http.StatusProcessing)
	h.Del(api.HeaderProgress)
}

func (e *exportWriter) start() {
	if e.started {
		return
	}
	e.started = true
	h := e.w.Header()
	for k, v := range e.final {
		h[k] = v
	}
	h.Set(api.HeaderProgress, api.FormatProgress(e.done, e.total))
	e.w.WriteHeader(http.StatusOK)
}

func (e *exportWriter) Write(p []byte) (int, error) {
	e.start()
	return e.w.Write(p)
}

// handleGrep searches the session's whole retained log, line by line
// (export.Grep), for ?pattern= (Go regexp syntax, or a plain string with
// ?literal=1; ?i=1: ignoring case), and streams the hits as JSON lines
// (api.GrepHit), stopping after ?limit= hits when given.
func (s *Server) handleGrep(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	q := r.URL.Query()
	pat := q.Get("pattern")
	if pat == "" {
		writeError(w, http.StatusBadRequest, "no pattern to search for")
		return
	}
	if v, _ := strconv.ParseBool(q.Get("literal")); v {
		pat = regexp.QuoteMeta(pat)
	}
	if v, _ := strconv.ParseBool(q.Get("i")); v {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		writeError(w, http.StatusBadRequest, "pattern %q: %v", q.Get("pattern"), err)
		return
	}
	limit := -1 // no limit
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit <= 0 {
			writeError(w, http.StatusBadRequest, "limit=%q is not a number of hits", v)
			return
		}
	}
	l, err := openLog(s.cfg.StateDir, sess)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer l.Close()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Trailer", api.HeaderError)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	flushed := time.Now()
	flush := func() error {
		flushed = time.Now()
		if err := bw.Flush(); err != nil {
			return err
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		return nil
	}
	err = export.Grep(l, re, l.First(), l.End(), func(hit export.Hit) error {
		out := api.GrepHit{Offset: hit.Offset, End: hit.End, Shown: hit.Shown, Line: hit.Line}
		if !hit.Time.IsZero() {
			ms := hit.Time.UnixMilli()
			out.Time, out.T = &hit.Time, &ms
		}
		if err := enc.Encode(out); err != nil {
			return err
		}
		if limit--; limit == 0 {
			return errEnough
		}
		if time.Since(flushed) >= 100*time.Millisecond {
			return flush()
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		err = nil
	}
	if ferr := flush(); err == nil {
		err = ferr
	}
	if err != nil {
		s.log.Warn("grep cut short", "session", sess.ID, "err", err)
		w.Header().Set(api.HeaderError, err.Error())
	}
}

// errEnough stops a grep that has found the hits it was asked for.
var errEnough = errors.New("server: enough hits")
