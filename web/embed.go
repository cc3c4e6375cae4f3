// Package web is termkeep's browser UI: the page, script and styles that
// `npm run build` (make build) bundles from web/src into web/dist, embedded
// in the binary so a single file serves everything.
//
// A binary built before the bundle was (a fresh clone, no npm) still
// builds, because dist/ keeps a placeholder file; its UI is a page that
// says how to build the real one.
package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed all:dist
var dist embed.FS

// asset is one embedded file, hashed once at start. Its bytes stay where
// the binary has them: a copy on the heap would be most of an idle
// server's heap.
type asset struct {
	name  string // in the fs.FS
	ctype string
	etag  string
}

// Handler serves the UI: GET / is the page, /assets/... its script,
// styles and icon. Every answer is revalidated (the bundle's names carry no
// hash) with a strong ETag, so a browser downloads it again only after the
// binary changed. Unknown paths are 404. The server's guard (Host, Origin,
// path, security headers) runs before it; it asks for no token, since the
// page and its assets are the same for everyone and hold no data: the page
// signs in by itself.
func Handler() http.Handler { return handler(dist) }

// handler serves the files under "dist" in fsys.
func handler(fsys fs.FS) http.Handler {
	assets := load(fsys)
	_, built := assets["/index.html"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := r.URL.Path
		if p == "/" || p == "/index.html" {
			if !built {
				notBuilt(w)
				return
			}
			p = "/index.html"
		}
		a, ok := assets[p]
		if !ok || strings.HasPrefix(path.Base(p), ".") {
			http.NotFound(w, r)
			return
		}
		f, err := fsys.Open(a.name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer f.Close()
		rs, ok := f.(io.ReadSeeker) // embed.FS's files are
		if !ok {
			http.Error(w, "web: "+a.name+" cannot seek", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.ctype)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		// ServeContent answers If-None-Match with 304 from the ETag.
		http.ServeContent(w, r, p, time.Time{}, rs)
	})
}

// Built reports whether the binary carries the built UI (web/dist/index.html).
func Built() bool {
	_, err := fs.Stat(dist, "dist/index.html")
	return err == nil
}

func load(fsys fs.FS) map[string]asset {
	out := map[string]asset{}
	fs.WalkDir(fsys, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		f, err := fsys.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		var head [512]byte
		n, _ := io.ReadFull(f, head[:])
		sum := sha256.New()
		sum.Write(head[:n])
		if _, err := io.Copy(sum, f); err != nil {
			return nil
		}
		ctype := mime.TypeByExtension(path.Ext(p))
		if ctype == "" {
			ctype = http.DetectContentType(head[:n])
		}
		out[strings.TrimPrefix(p, "dist")] = asset{name: p, ctype: ctype, etag: `"` + hex.EncodeToString(sum.Sum(nil)[:12]) + `"`}
		return nil
	})
	return out
}

// notBuilt is the page of a binary built without the UI bundle.
func notBuilt(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, `<!doctype html>
<meta charset="utf-8">
<title>termkeep: the web UI is not built</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;color:#222}code{background:#eee;padding:0 .3em;border-radius:3px}</style>
<h1>The web UI is not built</h1>
<p>This termkeep binary was built without its browser UI. Run <code>make build</code>
(it needs Node.js and npm) and start the server again; <code>make run</code> does both.</p>
<p>The server itself works: <code>termkeep attach</code>, the REST API at <code>/api/sessions</code>
and WebSocket viewers at <code>/ws/sessions/{id}</code> are unaffected.</p>
`)
}
