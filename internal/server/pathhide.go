package server

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The server's own paths (the state directory, which holds the owner token,
// the registry, the sockets and the logs; the binaries) are the owner's to
// know. A user's token or a share link learns none of them: /api/health
// leaves them out, and the error text of any answer to such a principal has
// them replaced (pathHider), whatever code wrote it.

// hiddenPath is what a server path becomes in an answer to anyone but the
// owner.
const hiddenPath = "<server path>"

// serverPaths returns the paths an answer to a non-owner never shows,
// longest first (so the state directory's sessions/ goes whole, not as a
// state directory with a tail), each also as the file system resolves it.
func (s *Server) serverPaths() []string {
	var paths []string
	add := func(p string) {
		if p == "" || p == "/" || p == "." {
			return
		}
		paths = append(paths, p)
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p && r != "/" {
			paths = append(paths, r)
		}
	}
	add(s.cfg.StateDir.String())
	if len(s.cfg.HolderArgv) > 0 {
		add(s.cfg.HolderArgv[0])
	}
	if exe, err := os.Executable(); err == nil {
		add(exe)
	}
	add(s.cfg.TLSCert)
	add(s.cfg.TLSKey)
	slices.SortFunc(paths, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(paths)
}

// hidePaths returns msg with every one of paths replaced by hiddenPath.
func hidePaths(msg string, paths []string) string {
	for _, p := range paths {
		msg = strings.ReplaceAll(msg, p, hiddenPath)
	}
	return msg
}

// pathHider is the ResponseWriter of a request by anyone but the owner:
// writeError looks for it (through Unwrap) and hides the server's paths in
// the error it writes. It passes Flush and Hijack on, so event streams and
// WebSocket viewers work through it.
type pathHider struct {
	http.ResponseWriter
	paths []string
}

func (h pathHider) Unwrap() http.ResponseWriter { return h.ResponseWriter }

func (h pathHider) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (h pathHider) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if hj, ok := h.ResponseWriter.(http.Hijacker); ok {
		return hj.Hijack()
	}
	return nil, nil, errors.New("connection cannot be upgraded")
}

// hiderOf finds the pathHider under w, if any.
func hiderOf(w http.ResponseWriter) (pathHider, bool) {
	for {
		switch t := w.(type) {
		case pathHider:
			return t, true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return pathHider{}, false
		}
	}
}
