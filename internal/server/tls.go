package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Who may reach the TCP listener, and over what. On a loopback address only
// the machine's own users and processes can connect, and the unix socket's
// uid fence is not there anyway: plain HTTP is the default. Any other
// address puts the access token and every keystroke on a network, so the
// server serves HTTPS (and WSS) with the configured certificate, or plain
// HTTP only when told so in as many words (--insecure-no-tls), and refuses
// to start otherwise.

// listenIsLoopback reports whether the listen address addr can only be
// reached from this machine: 127.0.0.0/8, ::1 or the name localhost. An
// empty host (":7420", every interface), 0.0.0.0, :: and any other name
// are not.
func listenIsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// gatewayTLS checks the listener's configuration before anything starts:
// a certificate and its key come together and load, a non-loopback address
// has TLS or the explicit permission to go without, and every allowed
// origin is an origin. It returns the TLS configuration to serve with (nil:
// plain HTTP) and the allowed origins, parsed.
func gatewayTLS(cfg Config) (*tls.Config, []*url.URL, error) {
	origins, err := parseOrigins(cfg.AllowedOrigins)
	if err != nil {
		return nil, nil, err
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, nil, errors.New("server: --tls-cert and --tls-key go together: give both the certificate file and its private key file")
	}
	if cfg.Listen == "" {
		return nil, origins, nil
	}
	if cfg.TLSCert == "" {
		if !listenIsLoopback(cfg.Listen) && !cfg.InsecureNoTLS {
			return nil, nil, fmt.Errorf("server: refusing to serve plain HTTP on %s, which is not a loopback address: "+
				"anyone on the network could read the access token and every keystroke. "+
				"Give a certificate with --tls-cert FILE --tls-key FILE, or listen on 127.0.0.1 (behind a TLS proxy or an SSH tunnel), "+
				"or accept the risk with --insecure-no-tls", cfg.Listen)
		}
		return nil, origins, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, nil, fmt.Errorf("server: load the TLS certificate %s and key %s: %w", cfg.TLSCert, cfg.TLSKey, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		// HTTP/1.1 only: WebSocket upgrades hijack the connection, which
		// HTTP/2 has no room for.
		NextProtos: []string{"http/1.1"},
	}, origins, nil
}

// parseOrigins reads --allowed-origin values: scheme://host[:port], the
// form browsers send in Origin, with no path. A default port is dropped, as
// browsers drop it.
func parseOrigins(list []string) ([]*url.URL, error) {
	var out []*url.URL
	for _, o := range list {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("server: allowed origin %q is not an origin: write it as a browser does, scheme://host[:port] (e.g. https://term.example.com)", o)
		}
		host := strings.ToLower(u.Host)
		if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
			host = strings.ToLower(u.Hostname())
			if strings.Contains(host, ":") {
				host = "[" + host + "]"
			}
		}
		out = append(out, &url.URL{Scheme: u.Scheme, Host: host})
	}
	return out, nil
}

// configure finishes a guard for a listener served with TLS or not (its
// own origins become https://) and adds the allowed origins, and their
// hosts to the names the listener answers to (a proxy or a DNS name in
// front of it).
func (g *guard) configure(secure bool, port int, allowed []*url.URL) {
	g.secure = secure
	if secure {
		origins := map[string]bool{}
		for h := range g.hosts {
			if _, p, err := net.SplitHostPort(h); err == nil && p == strconv.Itoa(port) {
				origins["https://"+h] = true
				if port == 443 {
					// Browsers leave the default port out.
					bare := strings.TrimSuffix(h, ":443")
					g.hosts[bare] = true
					origins["https://"+bare] = true
				}
			}
		}
		g.origins = origins
	}
	for _, u := range allowed {
		g.origins[u.Scheme+"://"+u.Host] = true
		g.hosts[u.Host] = true
	}
}

// gatewayURL is the address `termkeep url` prints for a listener on addr.
// A listener on every interface has no address of its own: the first
// allowed origin of its scheme is the one to open, else 127.0.0.1.
func gatewayURL(addr *net.TCPAddr, secure bool, allowed []*url.URL) string {
	scheme := "http"
	if secure {
		scheme = "https"
	}
	if addr.IP.IsUnspecified() {
		for _, u := range allowed {
			if u.Scheme == scheme {
				return u.String() + "/"
			}
		}
		return scheme + "://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(addr.Port)) + "/"
	}
	return scheme + "://" + net.JoinHostPort(addr.IP.String(), strconv.Itoa(addr.Port)) + "/"
}
