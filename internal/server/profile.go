package server

import (
	"net/http"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"time"
)

// The server's own profiles, for finding where its memory or time goes on
// a machine where it misbehaves: GET /debug/pprof/NAME on the unix socket
// only (the owner's; never on the browser listener), in the format `go
// tool pprof` reads. NAME is a runtime profile (heap, allocs, goroutine,
// threadcreate, block, mutex), cpu, which samples for ?seconds=N (30 by
// default, at most 300), or trace, an execution trace (`go tool trace`:
// which goroutine woke which, and when) for ?seconds=N in the same way.
// ?debug=1 or 2 asks a runtime profile for text.

// maxCPUProfile bounds one CPU profile's or trace's length.
const maxCPUProfile = 5 * time.Minute

func (s *Server) handleProfile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "cpu" || name == "trace" {
		s.timedProfile(w, r, name)
		return
	}
	p := pprof.Lookup(name)
	if p == nil {
		writeError(w, http.StatusNotFound, "no profile %q: heap, allocs, goroutine, threadcreate, block, mutex, cpu or trace", name)
		return
	}
	debug := 0
	if v := r.URL.Query().Get("debug"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 2 {
			writeError(w, http.StatusBadRequest, "debug=%q: want 0, 1 or 2", v)
			return
		}
		debug = n
	}
	if debug > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	if err := p.WriteTo(w, debug); err != nil {
		s.log.Warn("write profile", "profile", name, "err", err)
	}
}

// timedProfile records the CPU profile or the execution trace for
// ?seconds=N into w.
func (s *Server) timedProfile(w http.ResponseWriter, r *http.Request, name string) {
	d := 30 * time.Second
	if v := r.URL.Query().Get("seconds"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || time.Duration(n)*time.Second > maxCPUProfile {
			writeError(w, http.StatusBadRequest, "seconds=%q: want 1 to %d", v, int(maxCPUProfile/time.Second))
			return
		}
		d = time.Duration(n) * time.Second
	}
	start, stop := pprof.StartCPUProfile, pprof.StopCPUProfile
	if name == "trace" {
		start, stop = trace.Start, trace.Stop
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if err := start(w); err != nil {
		// One at a time: the runtime has a single CPU profiler and tracer.
		writeError(w, http.StatusConflict, "%s profile: %v", name, err)
		return
	}
	select {
	case <-time.After(d):
	case <-r.Context().Done():
	}
	stop()
}
