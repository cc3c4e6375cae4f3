package server

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// Every Location the listener sends is built from a request's path, so a
// path must never turn it into another site's address: "//evil.example"
// and "/\evil.example" are read as protocol-relative by browsers, and a
// tab or newline inside ("/%09/evil.example") is dropped by them before
// they read it. Paths with control characters or backslashes are refused
// outright; every other path is cleaned and escaped first.

// checkRequestPath refuses a (decoded) request path that holds a control
// character or a backslash: no page or API path of termkeep has one.
func checkRequestPath(p string) error {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return fmt.Errorf("the path %q holds a control character or a backslash, which no termkeep address has", p)
		}
	}
	return nil
}

// redirectPath is p as a Location a browser reads as a path of this same
// origin: cleaned (no "." or ".." segments, no empty ones, so never "//"),
// one leading "/", a trailing "/" kept, and escaped.
func redirectPath(p string) string {
	clean := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	out := (&url.URL{Path: clean}).EscapedPath()
	if !strings.HasPrefix(out, "/") || strings.HasPrefix(out, "//") || strings.HasPrefix(out, "/\\") {
		return "/" // cannot happen; a Location must never leave the origin
	}
	return out
}
