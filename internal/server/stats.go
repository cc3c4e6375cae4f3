package server

import (
	"io"
	"net/http"
	"os"
	"time"

	"termkeep/internal/api"
)

// Probes and figures: /healthz (the process answers), /readyz (it has
// started and can write its registry), /v1/stats and /api/stats (the
// server and each session the caller sees). /metrics is metrics.go.

// handleHealthz is GET /healthz: 200 "ok" while the process answers.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, "ok\n")
}

// handleReadyz is GET /readyz: 200 "ok" once startup is over (the registry
// open, the sessions that were running picked up, auto-restores done) and
// while the registry can be written; else 503 with the reason.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if why := s.notReady(r); why != "" {
		if h, ok := hiderOf(w); ok { // pathhide.go: the browser listener's probe
			why = hidePaths(why, h.paths)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "not ready: "+why+"\n")
		return
	}
	io.WriteString(w, "ok\n")
}

// notReady says why the server is not ready, or "".
func (s *Server) notReady(r *http.Request) string {
	select {
	case <-s.done:
		return "the server is stopping"
	default:
	}
	if !s.startupDone.Load() {
		return "starting: picking up the sessions that were running and restoring those that asked for it"
	}
	return s.metrics.writeProblem(r.Context())
}

// probes answers /healthz and /readyz on the browser listener before its
// guard: they need no token, since they tell nothing but "ok" or why the
// server is not ready, and a load balancer or supervisor has none. Every
// other request goes to next.
func (s *Server) probes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && r.URL.Path != "/readyz" {
			next.ServeHTTP(w, r)
			return
		}
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		// Anyone may ask: why the registry cannot be written names no
		// server path here.
		w = pathHider{ResponseWriter: w, paths: s.serverPaths()}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "%s takes GET", r.URL.Path)
			return
		}
		if r.URL.Path == "/healthz" {
			s.handleHealthz(w, r)
			return
		}
		s.handleReadyz(w, r)
	})
}

// handleStats is GET /v1/stats (and /api/stats): the server's version and
// uptime, and the figures of each session the caller sees.
func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	all, err := s.store.Sessions(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	now := s.cfg.Now()
	disk, _ := s.metrics.disk.get()
	out := api.Stats{
		Version: s.cfg.Version, Pid: os.Getpid(), StartedAt: s.startedAt.UTC(),
		UptimeSeconds: seconds(now.Sub(s.startedAt)), Ready: s.startupDone.Load(),
		Sessions: []api.SessionStats{},
	}
	p := principalOf(ctx)
	for _, sess := range all {
		if !p.sees(sess) {
			continue
		}
		h := s.host(sess.ID)
		sess = s.withEnd(sess, h) // registry.go
		until := now
		if sess.EndedAt != nil && sess.State != "running" {
			until = *sess.EndedAt
		}
		st := api.SessionStats{
			ID: sess.ID, Name: sess.Name, State: string(sess.State), Workspace: sess.Workspace,
			CreatedAt: sess.CreatedAt, UptimeSeconds: seconds(until.Sub(sess.CreatedAt)), LogBytes: disk[sess.ID],
		}
		if h != nil {
			info := h.Info()
			st.BytesOut = info.End
			if e := h.Exit(); e != nil {
				st.BytesOut = max(st.BytesOut, e.End)
			}
			c := h.Counters()
			st.BytesIn, st.Resyncs = c.InputBytes, c.Resyncs
			st.Viewers = len(h.Viewers().Viewers)
			st.LastActivity = h.Activity().Last.UTC()
		}
		out.Sessions = append(out.Sessions, st)
	}
	writeJSON(w, http.StatusOK, out)
}

// seconds is d in seconds, to the millisecond, never negative.
func seconds(d time.Duration) float64 {
	return float64(max(d, 0).Milliseconds()) / 1000
}
