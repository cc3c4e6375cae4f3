package server

import (
	"os"
	"os/user"
	"strings"

	"termkeep/internal/store"
)

// A session's child environment is decided here and nowhere else: on
// create, on every restore, and for every listener.
//
// The owner's own processes reach the server through the unix socket
// (`termkeep new`, the MCP server): they pass their environment on, and
// the session gets it, as a shell started from that terminal would. The
// browser listener has no environment of its own to pass on, and the
// server's is not its to hand out: the server may hold credentials
// (AWS_SECRET_ACCESS_KEY, a deploy token) that neither a user token nor a
// share link was ever meant to read. Its sessions start from a clean login
// environment instead, and so does every restore of them, whoever asks,
// after a server restart too (the policy is in the session's row).

// envPolicy is how a session's child environment is made. Its value is
// stored in the registry (store.Session.EnvPolicy): never rename one.
type envPolicy string

const (
	// envCaller: the caller's environment, with the request's explicit
	// variables over it. A restore uses the restoring caller's (else the
	// server's) with the session's saved variables over it.
	envCaller envPolicy = "caller"
	// envLogin: a clean login environment (loginEnv), with the request's
	// variables over it; a restore, the same with the saved variables.
	envLogin envPolicy = "login"
)

// policyOf is the policy sess was made with. A row from before the policy
// was recorded was made from its caller's environment; a value this
// version does not know (a newer one wrote it) gets the policy that hands
// out nothing of the server's.
func policyOf(sess store.Session) envPolicy {
	switch envPolicy(sess.EnvPolicy) {
	case "", envCaller:
		return envCaller
	}
	return envLogin
}

// loginIdentity is what a clean login environment is made of: the server's
// user and the few variables of the server's that are no secret and that a
// login would set the same way.
type loginIdentity struct {
	Home, User, Shell, Path string
	// Locale is LANG, LANGUAGE and every LC_* the server has (KEY=VALUE).
	Locale []string
}

// defaultPath is a login PATH for a server that has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// serverIdentity reads the loginIdentity of this process: the user from the
// password database (os/user), falling back to environ's HOME and USER;
// SHELL and PATH from environ. The PATH is the server's: it names no
// secret, and a shell that is not a login shell would otherwise lack the
// owner's own tools (~/.local/bin, say). The locale is kept so that
// programs in the session read and write text the way the owner's do.
func serverIdentity(environ []string) loginIdentity {
	id := loginIdentity{
		Home:  envValue(environ, "HOME"),
		User:  envValue(environ, "USER"),
		Shell: envValue(environ, "SHELL"),
		Path:  envValue(environ, "PATH"),
	}
	if u, err := user.Current(); err == nil {
		if u.HomeDir != "" {
			id.Home = u.HomeDir
		}
		if u.Username != "" {
			id.User = u.Username
		}
	}
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if k == "LANG" || k == "LANGUAGE" || strings.HasPrefix(k, "LC_") {
			id.Locale = append(id.Locale, kv)
		}
	}
	return id
}

// loginEnv is the clean login environment of id: HOME, USER, LOGNAME,
// SHELL (else /bin/sh), PATH (else defaultPath), the locale and TERM.
// Nothing else of the server's environment is in it.
func loginEnv(id loginIdentity) []string {
	var env []string
	if id.Home != "" {
		env = append(env, "HOME="+id.Home)
	}
	if id.User != "" {
		env = append(env, "USER="+id.User, "LOGNAME="+id.User)
	}
	shell, path := id.Shell, id.Path
	if shell == "" {
		shell = "/bin/sh"
	}
	if path == "" {
		path = defaultPath
	}
	env = append(env, "SHELL="+shell, "PATH="+path)
	env = append(env, id.Locale...)
	return append(env, "TERM="+sessionTerm)
}

// sessionTerm is the TERM every child gets: the terminal that draws its
// output (the screen model, xterm.js) is xterm-compatible.
const sessionTerm = "xterm-256color"

// childEnv returns the whole environment of session id's child under p.
// caller is the caller's environment (envCaller only: envLogin ignores it);
// fallback stands in for an empty caller (the server's own, on a restore
// nobody passed an environment to); explicit is what the request or the
// session's saved environment sets, over either base. TERM and
// TERMKEEP_SESSION are the server's to set and come last.
func childEnv(p envPolicy, id loginIdentity, caller, fallback, explicit []string, sessionID string) []string {
	var base []string
	switch p {
	case envLogin:
		base = loginEnv(id)
	default:
		base = caller
		if len(base) == 0 {
			base = fallback
		}
	}
	env := mergeEnv(base, explicit)
	return mergeEnv(env, []string{"TERM=" + sessionTerm, "TERMKEEP_SESSION=" + sessionID})
}

// processEnv is the server's own environment, for childEnv's fallback and
// serverIdentity.
func processEnv() []string { return os.Environ() }
