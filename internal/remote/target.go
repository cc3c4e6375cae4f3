// Package remote reaches a termkeep on another machine through the user's
// own ssh: nothing of termkeep's listens on the network, and ssh does the
// authentication and the encryption (~/.ssh/config, agents, jump hosts
// and known_hosts apply as they do to any ssh).
//
// A target is HOST:SESSION (Parse). The local side runs ssh with a remote
// command that finds termkeep on the remote machine and runs its relay
// (Dialer.Relay): a byte relay between ssh's stdio and the remote server's
// socket, announced by one preamble line with the remote's protocol
// versions (docs/protocol.md, "Over ssh"). What ssh or the remote says
// when it fails becomes one sentence (Error).
package remote

import (
	"errors"
	"strconv"
	"strings"
)

// Target is what a command line names: a session on this machine (Host
// empty) or on another one reached over ssh.
type Target struct {
	// Host is what ssh is given (user@host, an alias, an address), ""
	// for this machine. An IPv6 address keeps its brackets here.
	Host string
	// Session is the session's id or name; "" for a HOST: alone.
	Session string
}

// Remote reports whether t is on another machine.
func (t Target) Remote() bool { return t.Host != "" }

// String is t as the user wrote it.
func (t Target) String() string {
	if t.Host == "" {
		return t.Session
	}
	return t.Host + ":" + t.Session
}

// SSHHost is the host as ssh takes it: an IPv6 address without its
// brackets ([::1] → ::1, user@[::1] → user@::1).
func (t Target) SSHHost() string {
	user, host := "", t.Host
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		user, host = host[:i+1], host[i+1:]
	}
	if len(host) > 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	return user + host
}

// Parse reads a command line's SESSION or HOST:SESSION. Session names
// cannot hold a ':', so the last ':' separates the host from the session,
// except inside an IPv6 address's brackets ([::1]:work). Without a ':'
// the session is on this machine, whatever else it holds (an '@'
// included). A host that ssh would read as an option (a leading '-'), or
// that holds spaces or control characters, is an error, and so is an
// empty host (":work").
func Parse(arg string) (Target, error) {
	sep := strings.LastIndexByte(arg, ':')
	if sep < 0 {
		return Target{Session: arg}, nil
	}
	host, session := arg[:sep], arg[sep+1:]
	if strings.ContainsAny(session, "[]") {
		// The last ':' was inside a bracketed address: no session given.
		return Target{}, errors.New(strconv.Quote(arg) + " has no ':' after its host: write HOST:SESSION (HOST: alone for ls and new)")
	}
	if host == "" {
		return Target{}, errors.New(strconv.Quote(arg) + " has no host before its ':' (session names hold no ':')")
	}
	if host[0] == '-' {
		return Target{}, errors.New("host " + strconv.Quote(host) + " starts with '-', which ssh would take for an option")
	}
	for _, r := range host {
		if r <= ' ' || r == 0x7f {
			return Target{}, errors.New("host " + strconv.Quote(host) + " holds a space or a control character")
		}
	}
	h := host
	if i := strings.LastIndexByte(h, '@'); i >= 0 {
		if i == 0 {
			return Target{}, errors.New("host " + strconv.Quote(host) + " has no user before its '@'")
		}
		h = h[i+1:]
	}
	if h == "" {
		return Target{}, errors.New("host " + strconv.Quote(host) + " has nothing after its '@'")
	}
	if open, closed := strings.IndexByte(h, '['), strings.IndexByte(h, ']'); open >= 0 || closed >= 0 {
		if open != 0 || closed != len(h)-1 || len(h) < 3 {
			return Target{}, errors.New("host " + strconv.Quote(host) + " has brackets that do not enclose it whole, as in [::1]:SESSION")
		}
	}
	return Target{Host: host, Session: session}, nil
}
