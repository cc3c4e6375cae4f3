package remote

import (
	"testing"

	"termkeep/internal/slowlink"
)

// startProxy forwards a port of its own to sshd s until the test ends
// (package slowlink: it delays or stalls the link).
func startProxy(t *testing.T, s *sshd) *proxy {
	t.Helper()
	p, err := slowlink.Start(s.Port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return &proxy{p, s}
}

type proxy struct {
	*slowlink.Proxy
	s *sshd
}

// via is ssh command line ssh of the proxy's sshd going through it.
func (p *proxy) via(ssh string) string { return p.s.Through(ssh, p.Port()) }
