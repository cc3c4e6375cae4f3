package remote

import (
	"fmt"
	"strings"
)

// Kind is what went wrong reaching a remote termkeep.
type Kind int

const (
	// KindNoSSH: the ssh command could not be run at all.
	KindNoSSH Kind = iota + 1
	// KindSSH: ssh could not reach the host or was refused (its exit
	// status 255): a wrong name, a host that is down or refuses, a host
	// key that does not match.
	KindSSH
	// KindAuth: ssh was refused for want of a password or passphrase it
	// could not ask for (a reconnect runs in batch mode).
	KindAuth
	// KindMissing: no termkeep where the remote command looked.
	KindMissing
	// KindVersion: a remote termkeep this one cannot speak with.
	KindVersion
	// KindRemote: the remote termkeep ran and failed, with its own
	// sentence.
	KindRemote
)

// Error is a failure to reach or use a remote termkeep, as one sentence.
type Error struct {
	Kind Kind
	Msg  string
	// Code is the exit status the command ends with: the remote
	// termkeep's own for KindRemote, else 1.
	Code int
}

func (e *Error) Error() string { return e.Msg }

// Transient reports whether trying again later may succeed: what ssh
// says of the network or the host, or of a remote termkeep that failed.
func (e *Error) Transient() bool {
	return e.Kind == KindSSH || e.Kind == KindAuth || e.Kind == KindRemote
}

// missingMark is what the remote command prints on standard error, with
// the remote PATH after it, when it finds no termkeep.
const missingMark = "termkeep-remote-missing"

// failure says why a remote command that ran with exit status exit
// (-1: killed by a signal), having printed stderr, gave no answer. tried
// is where it looked for termkeep, in words.
func failure(host string, exit int, stderr, tried string) *Error {
	last := lastLine(stderr)
	switch {
	case exit == 255 && strings.Contains(stderr, "Permission denied"):
		return &Error{Kind: KindAuth, Code: 1, Msg: fmt.Sprintf("ssh to %s was refused: %s", host, last)}
	case exit == 255:
		if last == "" {
			last = "ssh exited with status 255 and said nothing"
		}
		return &Error{Kind: KindSSH, Code: 1, Msg: fmt.Sprintf("cannot reach %s: %s", host, last)}
	case exit == 127 && strings.Contains(stderr, missingMark):
		path := ""
		if i := strings.Index(stderr, missingMark+" PATH="); i >= 0 {
			path = lastLine(stderr[i+len(missingMark+" PATH="):])
		}
		return &Error{Kind: KindMissing, Code: 1, Msg: fmt.Sprintf(
			"no termkeep on %s: tried %s (its PATH is %s); install termkeep there (make install puts it in ~/.local/bin) or set TERMKEEP_REMOTE_BIN to its path",
			host, tried, orNone(path))}
	case strings.Contains(stderr, "unknown command") && strings.Contains(stderr, RelayArg):
		return &Error{Kind: KindVersion, Code: 1, Msg: fmt.Sprintf(
			"the termkeep on %s is older than remote attach (it has no %s command): install this version there", host, RelayArg)}
	}
	if msg := termkeepSays(stderr); msg != "" {
		code := exit
		if code <= 0 {
			code = 1
		}
		return &Error{Kind: KindRemote, Code: code, Msg: fmt.Sprintf("on %s: %s", host, msg)}
	}
	why := fmt.Sprintf("exited with status %d", exit)
	if exit < 0 {
		why = "was killed"
	}
	if last != "" {
		why += ": " + last
	}
	return &Error{Kind: KindRemote, Code: 1, Msg: fmt.Sprintf("the remote command on %s %s", host, why)}
}

// versionError is a remote termkeep of versions v that one of local..
// localMin cannot speak with.
func versionError(host string, v Versions, local, localMin int) *Error {
	if v.Relay != RelayVersion {
		return &Error{Kind: KindVersion, Code: 1, Msg: fmt.Sprintf(
			"the termkeep on %s relays by contract %d, this one by %d: install the same termkeep on both", host, v.Relay, RelayVersion)}
	}
	return &Error{Kind: KindVersion, Code: 1, Msg: fmt.Sprintf(
		"the termkeep on %s speaks protocol %d (down to %d), this one %d (down to %d): install the same termkeep on both",
		host, v.Protocol, v.Min, local, localMin)}
}

// termkeepSays is the last sentence a termkeep printed on standard
// error ("termkeep: …"), without its prefix; "" when there is none.
func termkeepSays(stderr string) string {
	lines := strings.Split(stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if msg, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "termkeep: "); ok && msg != "" {
			return msg
		}
	}
	return ""
}

// lastLine is the last line of s that is not blank, trimmed.
func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "empty"
	}
	return s
}
