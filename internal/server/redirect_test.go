package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// offOrigin reports whether a browser would read loc as an address of
// another origin: anything but one "/" and a path.
func offOrigin(loc string) bool {
	return !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") ||
		strings.ContainsAny(loc, "\t\r\n\x00\\") || strings.ContainsFunc(loc, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func TestRedirectPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/", "/"},
		{"", "/"},
		{"/a/b/", "/a/b/"},
		{"//evil.example", "/evil.example"},
		{"///evil.example/x", "/evil.example/x"},
		{"/./evil.example", "/evil.example"},
		{"/../../evil.example", "/evil.example"},
		{"/a/../../..//evil.example", "/evil.example"},
		{"/a b", "/a%20b"},
		{"/%2F%2Fevil", "/%252F%252Fevil"}, // as decoded already: the literal text
		{"/évil", "/%C3%A9vil"},
		{"/?#", "/%3F%23"},
	} {
		got := redirectPath(tc.in)
		if got != tc.want || offOrigin(got) {
			t.Errorf("redirectPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, p := range []string{"/\tx", "/\x00", "/a\r\nSet-Cookie: x", "/\\evil", "/\x7f", "\\\\evil", "/x\x1b[2J"} {
		if checkRequestPath(p) == nil {
			t.Errorf("checkRequestPath(%q) let it in", p)
		}
	}
	for _, p := range []string{"/", "/api/sessions/a-b_c.d", "/assets/app.js", "/é", "/a b"} {
		if err := checkRequestPath(p); err != nil {
			t.Errorf("checkRequestPath(%q): %v", p, err)
		}
	}
}

// rawGet sends target exactly as written in a request line, as a hostile
// client would, and returns the answer's status and Location.
func rawGet(t *testing.T, base, target string) (int, string) {
	t.Helper()
	u, _ := url.Parse(base)
	c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, u.Host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %q: %v", target, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// No path turns the listener's redirect into one to another site: hostile
// paths are refused (400) or cleaned into a path of this origin.
func TestNoOpenRedirect(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	for _, target := range []string{
		"//evil.example/landed",
		"/%09/evil.example/landed",
		"/%2F%2Fevil.example/landed",
		"/%2f/evil.example",
		"/%5Cevil.example",
		"/%5C%5Cevil.example",
		"/\\evil.example",
		"/%0D%0ALocation:%20http://evil.example",
		"/%0A/evil.example",
		"/%00/evil.example",
		"/%7F/evil.example",
		"/./..//evil.example",
		"/%2E%2E/%2Fevil.example",
		"///evil.example",
	} {
		code, loc := rawGet(t, ts.base, target+"?token="+ts.token)
		switch {
		case code == http.StatusBadRequest:
		case code == http.StatusSeeOther && !offOrigin(loc):
			if !strings.HasSuffix(loc, "#token="+ts.token) {
				t.Errorf("GET %s: Location %q lost the token", target, loc)
			}
		default:
			t.Errorf("GET %s: %d, Location %q", target, code, loc)
		}
	}
	// Control characters and backslashes are refused wherever they are.
	for _, target := range []string{"/%09/evil.example", "/api/sessions/%00", "/%5C", "/assets/%0Dx"} {
		if code, _ := rawGet(t, ts.base, target); code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", target, code)
		}
	}
}

func FuzzRedirectPath(f *testing.F) {
	for _, s := range []string{"/", "//evil", "/\\evil", "/\t/evil", "/../x", "/a/./b/", "", "\\", "/%2F", "/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if checkRequestPath(p) != nil {
			return
		}
		loc := redirectPath(p)
		if offOrigin(loc) {
			t.Fatalf("redirectPath(%q) = %q leaves the origin", p, loc)
		}
		u, err := url.Parse(loc)
		if err != nil || u.Host != "" || u.Scheme != "" || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("redirectPath(%q) = %q parses as %+v, %v", p, loc, u, err)
		}
	})
}
