package server

import (
	"slices"
	"strings"
	"testing"

	"termkeep/internal/store"
)

func TestChildEnv(t *testing.T) {
	id := loginIdentity{Home: "/home/o", User: "o", Shell: "/bin/zsh", Path: "/usr/bin:/bin", Locale: []string{"LANG=de_DE.UTF-8", "LC_TIME=C"}}
	server := []string{"HOME=/home/o", "AWS_SECRET_ACCESS_KEY=s3cr3t", "PATH=/usr/bin", "SSH_AUTH_SOCK=/tmp/agent"}
	for _, tc := range []struct {
		name                       string
		policy                     envPolicy
		id                         loginIdentity
		caller, fallback, explicit []string
		want                       []string
	}{{
		name: "login ignores the caller and the server", policy: envLogin, id: id,
		caller: []string{"EVIL=1"}, fallback: server, explicit: []string{"X=1"},
		want: []string{"HOME=/home/o", "USER=o", "LOGNAME=o", "SHELL=/bin/zsh", "PATH=/usr/bin:/bin", "LANG=de_DE.UTF-8", "LC_TIME=C", "TERM=xterm-256color", "X=1", "TERMKEEP_SESSION=s1"},
	}, {
		name: "login: explicit overrides, but not TERM or TERMKEEP_SESSION", policy: envLogin, id: id,
		explicit: []string{"HOME=/tmp/h", "TERM=dumb", "TERMKEEP_SESSION=other", "PATH="},
		want:     []string{"HOME=/tmp/h", "USER=o", "LOGNAME=o", "SHELL=/bin/zsh", "PATH=", "LANG=de_DE.UTF-8", "LC_TIME=C", "TERM=xterm-256color", "TERMKEEP_SESSION=s1"},
	}, {
		name: "login with an unknown user and no shell or PATH", policy: envLogin,
		want: []string{"SHELL=/bin/sh", "PATH=" + defaultPath, "TERM=xterm-256color", "TERMKEEP_SESSION=s1"},
	}, {
		name: "caller: the caller's environment", policy: envCaller, id: id,
		caller: []string{"A=1", "SECRET_OF_CALLER=x"}, fallback: server, explicit: []string{"A=2"},
		want: []string{"A=2", "SECRET_OF_CALLER=x", "TERM=xterm-256color", "TERMKEEP_SESSION=s1"},
	}, {
		name: "caller: none passed, the fallback", policy: envCaller, fallback: []string{"B=1"},
		want: []string{"B=1", "TERM=xterm-256color", "TERMKEEP_SESSION=s1"},
	}, {
		name: "an unknown policy is the caller's (rows from before)", policy: "", caller: []string{"C=1"},
		want: []string{"C=1", "TERM=xterm-256color", "TERMKEEP_SESSION=s1"},
	}, {
		name: "malformed entries are dropped", policy: envLogin, id: loginIdentity{User: "o"},
		explicit: []string{"NOEQUALS", "=v", "K=v=w"},
		want:     []string{"USER=o", "LOGNAME=o", "SHELL=/bin/sh", "PATH=" + defaultPath, "TERM=xterm-256color", "K=v=w", "TERMKEEP_SESSION=s1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := childEnv(tc.policy, tc.id, tc.caller, tc.fallback, tc.explicit, "s1")
			if !slices.Equal(got, tc.want) {
				t.Errorf("childEnv =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// The server's identity keeps its locale and nothing secret.
func TestServerIdentity(t *testing.T) {
	id := serverIdentity([]string{"HOME=/h", "USER=u", "SHELL=/bin/fish", "PATH=/p", "LANG=C.UTF-8", "LC_ALL=C", "LANGUAGE=en", "LCX=no", "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=k"})
	if id.Shell != "/bin/fish" || id.Path != "/p" || id.Home == "" || id.User == "" {
		t.Errorf("identity %+v", id)
	}
	if !slices.Equal(id.Locale, []string{"LANG=C.UTF-8", "LC_ALL=C", "LANGUAGE=en"}) {
		t.Errorf("locale %q", id.Locale)
	}
	env := strings.Join(loginEnv(id), "\n")
	for _, bad := range []string{"GITHUB_TOKEN", "AWS_SECRET", "LCX"} {
		if strings.Contains(env, bad) {
			t.Errorf("the login environment has %s:\n%s", bad, env)
		}
	}
}

func TestPolicyOf(t *testing.T) {
	for in, want := range map[string]envPolicy{"": envCaller, "caller": envCaller, "login": envLogin, "LOGIN": envLogin, "bogus": envLogin} {
		if got := policyOf(store.Session{EnvPolicy: in}); got != want {
			t.Errorf("policyOf(%q) = %q, want %q", in, got, want)
		}
	}
}
