package remote

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		arg, host, session, sshHost string
		err                         string // part of the error; "" for none
	}{
		{arg: "work", session: "work"},
		{arg: "me@work", session: "me@work"}, // an '@' alone stays local
		{arg: "a1b2c3d4", session: "a1b2c3d4"},
		{arg: "", session: ""},
		{arg: "box:work", host: "box", session: "work", sshHost: "box"},
		{arg: "box:", host: "box", session: "", sshHost: "box"},
		{arg: "me@box:work", host: "me@box", session: "work", sshHost: "me@box"},
		{arg: "me@box:me@work", host: "me@box", session: "me@work", sshHost: "me@box"},
		{arg: "[::1]:work", host: "[::1]", session: "work", sshHost: "::1"},
		{arg: "me@[fe80::1%eth0]:", host: "me@[fe80::1%eth0]", session: "", sshHost: "me@fe80::1%eth0"},
		{arg: "::1:work", host: "::1", session: "work", sshHost: "::1"}, // the last ':' separates
		{arg: "box.example.com:a:b", host: "box.example.com:a", session: "b", sshHost: "box.example.com:a"},
		{arg: "[::1]", err: "no ':' after its host"},
		{arg: "me@[::1]", err: "no ':' after its host"},
		{arg: ":work", err: "no host"},
		{arg: ":", err: "no host"},
		{arg: "-oProxyCommand=x:work", err: "starts with '-'"},
		{arg: "bo x:work", err: "space or a control"},
		{arg: "box\n:work", err: "space or a control"},
		{arg: "box\x7f:work", err: "space or a control"},
		{arg: "@box:work", err: "no user"},
		{arg: "me@:work", err: "nothing after its '@'"},
		{arg: "b[ox]:work", err: "brackets"},
		{arg: "[]:work", err: "brackets"},
		{arg: "[::1:work", err: "brackets"},
	} {
		got, err := Parse(c.arg)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) = %+v, %v; want an error saying %q", c.arg, got, err, c.err)
			}
		case err != nil:
			t.Errorf("Parse(%q): %v", c.arg, err)
		case got.Host != c.host || got.Session != c.session || got.SSHHost() != c.sshHost && c.host != "":
			t.Errorf("Parse(%q) = host %q session %q ssh %q; want %q %q %q", c.arg, got.Host, got.Session, got.SSHHost(), c.host, c.session, c.sshHost)
		case got.Remote() != (c.host != "") || got.String() != c.arg:
			t.Errorf("Parse(%q): remote %v, written back as %q", c.arg, got.Remote(), got.String())
		}
	}
}

// Any argument: Parse never panics; a local target is the argument
// whole and holds no ':'; a remote one's host is non-empty, starts with
// no '-', holds no space, and written back is the argument.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"work", "box:work", "[::1]:w", "me@[::1]:", ":", "-o:x", "a@:b", "[:", "]:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		got, err := Parse(arg)
		if err != nil {
			return
		}
		if !got.Remote() {
			if got.Session != arg || strings.Contains(arg, ":") {
				t.Fatalf("Parse(%q) = local %q", arg, got.Session)
			}
			return
		}
		if got.Host == "" || got.Host[0] == '-' || strings.ContainsAny(got.Host, " \t\n") || strings.Contains(got.Session, ":") {
			t.Fatalf("Parse(%q) = %+v", arg, got)
		}
		if got.String() != arg {
			t.Fatalf("Parse(%q) written back as %q", arg, got.String())
		}
		if h := got.SSHHost(); h == "" || h[0] == '-' {
			t.Fatalf("Parse(%q): ssh host %q", arg, h)
		}
	})
}
