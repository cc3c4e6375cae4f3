package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func get(t *testing.T, h http.Handler, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandlerServesTheBundle(t *testing.T) {
	h := handler(fstest.MapFS{
		"dist/.gitkeep":       {},
		"dist/index.html":     {Data: []byte("<!doctype html><title>termkeep</title>")},
		"dist/assets/app.js":  {Data: []byte("console.log(1)")},
		"dist/assets/app.css": {Data: []byte("body{}")},
	})
	for _, tc := range []struct {
		path, ctype string
		status      int
	}{
		{"/", "text/html", 200},
		{"/index.html", "text/html", 200},
		{"/assets/app.js", "text/javascript", 200},
		{"/assets/app.css", "text/css", 200},
		{"/assets/missing.js", "", 404},
		{"/.gitkeep", "", 404},
		{"/api/nothing", "", 404},
	} {
		w := get(t, h, tc.path, nil)
		if w.Code != tc.status {
			t.Errorf("GET %s: status %d, want %d", tc.path, w.Code, tc.status)
			continue
		}
		if tc.status == 200 {
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, tc.ctype) {
				t.Errorf("GET %s: Content-Type %q, want %s", tc.path, ct, tc.ctype)
			}
			if w.Header().Get("Cache-Control") != "no-cache" || w.Header().Get("ETag") == "" {
				t.Errorf("GET %s: want revalidation with an ETag, got Cache-Control %q ETag %q", tc.path, w.Header().Get("Cache-Control"), w.Header().Get("ETag"))
			}
		}
	}
	if body := get(t, h, "/assets/app.js", nil).Body.String(); body != "console.log(1)" {
		t.Errorf("GET /assets/app.js: body %q, want the file's", body)
	}
	if w := get(t, h, "/assets/app.js", map[string]string{"Range": "bytes=8-"}); w.Code != http.StatusPartialContent || w.Body.String() != "log(1)" {
		t.Errorf("GET /assets/app.js from byte 8: %d %q", w.Code, w.Body.String())
	}
	etag := get(t, h, "/assets/app.js", nil).Header().Get("ETag")
	if w := get(t, h, "/assets/app.js", map[string]string{"If-None-Match": etag}); w.Code != http.StatusNotModified {
		t.Errorf("a matching If-None-Match: status %d, want 304", w.Code)
	}
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: status %d, want 405", w.Code)
	}
}

func TestHandlerWithoutTheBundleSaysHowToBuildIt(t *testing.T) {
	h := handler(fstest.MapFS{"dist/.gitkeep": {}})
	w := get(t, h, "/", nil)
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "make build") {
		t.Fatalf("GET / without a bundle: %d %q", w.Code, w.Body.String())
	}
	if strings.Contains(w.Body.String(), "<script") {
		t.Error("the page must not need a script (the CSP forbids inline ones)")
	}
}
