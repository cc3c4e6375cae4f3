package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"

	"termkeep/internal/api"
	"termkeep/internal/store"
)

// Workspaces are named groups of sessions with a directory. Pausing one ends
// its sessions' processes (SIGHUP, then SIGKILL after the grace) and leaves
// them paused, with their logs, screens and history; resuming restores each.
// Removing one ends its sessions and deletes their data.

func checkWorkspaceName(name string) error {
	if p := nameProblem(name); p != "" {
		return fmt.Errorf("workspace name %q is not allowed: %s", name, p)
	}
	return nil
}

// joinWorkspace makes sure the workspace a new session names exists (it is
// created with the session's directory) and is not paused.
func (s *Server) joinWorkspace(ctx context.Context, name, cwd string) (int, error) {
	if err := checkWorkspaceName(name); err != nil {
		return http.StatusBadRequest, err
	}
	w, err := s.store.Workspace(ctx, name)
	if errors.Is(err, store.ErrWorkspaceNotFound) {
		err = s.store.CreateWorkspace(ctx, store.Workspace{Name: name, Dir: cwd})
		if errors.Is(err, store.ErrWorkspaceExists) {
			return 0, nil // created meanwhile
		}
		if err != nil {
			return http.StatusInternalServerError, err
		}
		s.events.emit(store.EventWorkspaceCreated, "", map[string]any{"workspace": name, "dir": cwd})
		return 0, nil
	}
	if err != nil {
		return http.StatusInternalServerError, err
	}
	if w.Paused {
		return http.StatusConflict, fmt.Errorf("workspace %s is paused; resume it first (termkeep workspace resume %s)", name, name)
	}
	return 0, nil
}

func (s *Server) workspaceView(ctx context.Context, w store.Workspace) api.Workspace {
	out := api.Workspace{Name: w.Name, Dir: w.Dir, Paused: w.Paused, AutoRestore: w.AutoRestore, CreatedAt: w.CreatedAt}
	if list, err := s.store.SessionsInWorkspace(ctx, w.Name); err == nil {
		out.Sessions = len(list)
		for _, sess := range list {
			if sess.State == store.StateRunning {
				out.Running++
			}
		}
	}
	return out
}

// withWorkspace resolves {name} for the handlers of one workspace.
func (s *Server) withWorkspace(fn func(http.ResponseWriter, *http.Request, store.Workspace)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if !validRef(name) {
			writeError(w, http.StatusNotFound, "no workspace %q (see `termkeep workspace ls`)", name)
			return
		}
		ws, err := s.store.Workspace(r.Context(), name)
		if errors.Is(err, store.ErrWorkspaceNotFound) {
			writeError(w, http.StatusNotFound, "no workspace %q (see `termkeep workspace ls`)", name)
			return
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, "%v", err)
			return
		}
		fn(w, r, ws)
	}
}

func (s *Server) handleWorkspaces(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Workspaces(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	out := make([]api.Workspace, 0, len(list))
	for _, ws := range list {
		out = append(out, s.workspaceView(r.Context(), ws))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleWorkspaceCreate(w http.ResponseWriter, r *http.Request) {
	var req api.WorkspaceRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if err := checkWorkspaceName(req.Name); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if !filepath.IsAbs(req.Dir) || !isDir(req.Dir) {
		writeError(w, http.StatusBadRequest, "workspace directory %q is not an existing absolute directory", req.Dir)
		return
	}
	ws := store.Workspace{Name: req.Name, Dir: filepath.Clean(req.Dir), AutoRestore: req.AutoRestore}
	if err := s.store.CreateWorkspace(r.Context(), ws); err != nil {
		if errors.Is(err, store.ErrWorkspaceExists) {
			writeError(w, http.StatusConflict, "a workspace named %q already exists", req.Name)
			return
		}
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.events.emit(store.EventWorkspaceCreated, "", map[string]any{"workspace": ws.Name, "dir": ws.Dir})
	got, _ := s.store.Workspace(r.Context(), ws.Name)
	writeJSON(w, http.StatusCreated, s.workspaceView(r.Context(), got))
}

func (s *Server) handleWorkspaceGet(w http.ResponseWriter, r *http.Request, ws store.Workspace) {
	writeJSON(w, http.StatusOK, s.workspaceView(r.Context(), ws))
}

// markWorkspace records whether ws is paused and returns its sessions, or
// answers the error and returns false.
func (s *Server) markWorkspace(w http.ResponseWriter, r *http.Request, ws store.Workspace, paused bool) ([]store.Session, bool) {
	if err := s.store.SetWorkspacePaused(r.Context(), ws.Name, paused); err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return nil, false
	}
	list, err := s.store.SessionsInWorkspace(r.Context(), ws.Name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return nil, false
	}
	return list, true
}

// handleWorkspacePause ends the processes of every running session of the
// workspace, all at once, each SIGHUP then SIGKILL after the grace; they
// become paused.
func (s *Server) handleWorkspacePause(w http.ResponseWriter, r *http.Request, ws store.Workspace) {
	ctx := r.Context()
	list, ok := s.markWorkspace(w, r, ws, true)
	if !ok {
		return
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
	)
	reason := "workspace " + ws.Name + " was paused"
	for _, sess := range list {
		h := s.host(sess.ID)
		if sess.State != store.StateRunning || h == nil || h.Exit() != nil {
			continue
		}
		// Paused first, so the end the holder reports leaves it paused.
		if err := s.store.Pause(ctx, sess.ID, reason); err != nil {
			if !errors.Is(err, store.ErrNotRunning) {
				errs = append(errs, fmt.Sprintf("%s: %v", ref(sess), err))
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.kill(h); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("%s: %v", ref(sess), err))
				mu.Unlock()
			}
			s.events.emit(store.EventSessionPaused, sess.ID, map[string]any{"workspace": ws.Name})
		}()
	}
	wg.Wait()
	s.log.Info("workspace paused", "workspace", ws.Name, "errors", len(errs))
	s.writeWorkspaceChange(w, ctx, ws.Name, errs)
}

// handleWorkspaceResume restores every paused session of the workspace.
func (s *Server) handleWorkspaceResume(w http.ResponseWriter, r *http.Request, ws store.Workspace) {
	ctx := r.Context()
	list, ok := s.markWorkspace(w, r, ws, false)
	if !ok {
		return
	}
	var errs []string
	for _, sess := range list {
		if sess.State != store.StatePaused {
			continue
		}
		if _, notices, err := s.restore(ctx, sess, nil); err != nil && !errors.Is(err, errRunning) {
			errs = append(errs, fmt.Sprintf("%s: %v", ref(sess), err))
		} else {
			for _, n := range notices {
				errs = append(errs, fmt.Sprintf("%s: %s", ref(sess), n))
			}
		}
	}
	s.log.Info("workspace resumed", "workspace", ws.Name, "errors", len(errs))
	s.writeWorkspaceChange(w, ctx, ws.Name, errs)
}

func (s *Server) writeWorkspaceChange(w http.ResponseWriter, ctx context.Context, name string, errs []string) {
	out := api.WorkspaceChange{Sessions: []api.Session{}, Errors: errs}
	if ws, err := s.store.Workspace(ctx, name); err == nil {
		out.Workspace = s.workspaceView(ctx, ws)
	}
	if list, err := s.store.SessionsInWorkspace(ctx, name); err == nil {
		for _, sess := range list {
			out.Sessions = append(out.Sessions, s.view(sess, s.host(sess.ID)))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleWorkspaceRemove ends every session of the workspace, deletes their
// data and then the workspace.
func (s *Server) handleWorkspaceRemove(w http.ResponseWriter, r *http.Request, ws store.Workspace) {
	ctx := r.Context()
	list, err := s.store.SessionsInWorkspace(ctx, ws.Name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	for _, sess := range list {
		h := s.host(sess.ID)
		if h == nil {
			continue
		}
		if status, err := s.remove(ctx, sess, h, true); err != nil {
			writeError(w, status, "remove session %s of workspace %s: %v", ref(sess), ws.Name, err)
			return
		}
	}
	if err := s.store.DeleteWorkspace(ctx, ws.Name); err != nil && !errors.Is(err, store.ErrWorkspaceNotFound) {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.events.emit(store.EventWorkspaceRemoved, "", map[string]any{"workspace": ws.Name, "sessions": len(list)})
	w.WriteHeader(http.StatusNoContent)
}
