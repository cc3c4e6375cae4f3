package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"termkeep/internal/api"
	"termkeep/internal/store"
)

// Bounds on what one request may ask for. Each breach is refused with a
// sentence and changes nothing.
const (
	// MaxEnvVars and MaxEnvBytes bound the environment a create or restore
	// request carries (env, set_env and keep_env together).
	MaxEnvVars  = 1000
	MaxEnvBytes = 1 << 20
	// DefaultMaxSessions is how many running sessions one user may have
	// when Config.MaxSessions is 0.
	DefaultMaxSessions = 1000
)

// validRef reports whether ref (a {ref} or {name} of a path) can be a
// session id, a session name or a workspace name at all. Anything else, a
// path like ../../etc, a NUL or a newline included, is answered as unknown
// without a look at the registry, let alone the file system.
func validRef(ref string) bool { return api.NameRE.MatchString(ref) }

// nameProblem explains why name may not be given to a session or a
// workspace ("" when it may): api.NameProblem, shared with the CLI.
func nameProblem(name string) string { return api.NameProblem(name) }

// checkEnv checks the environment of a create or restore request: at most
// MaxEnvVars variables and MaxEnvBytes bytes in all, each entry of lists
// KEY=VALUE and each of names a bare KEY, with a name of printable ASCII
// (no '=', no space) and no NUL in it. An entry of lists without '=' is
// refused: the child would get a line no program can read as a variable.
func checkEnv(names []string, lists ...[]string) error {
	lists = append(lists, names)
	n, size := 0, 0
	for _, l := range lists {
		n += len(l)
		for _, kv := range l {
			size += len(kv)
		}
	}
	if n > MaxEnvVars {
		return fmt.Errorf("the request carries %d environment variables; at most %d are accepted", n, MaxEnvVars)
	}
	if size > MaxEnvBytes {
		return fmt.Errorf("the request's environment is %d bytes; at most %d (1 MiB) are accepted", size, MaxEnvBytes)
	}
	for i, l := range lists {
		bare := i == len(lists)-1
		for _, kv := range l {
			k, _, hasEq := strings.Cut(kv, "=")
			if !bare && !hasEq && validEnvName(k) {
				return fmt.Errorf("environment variable %.80q is not KEY=VALUE: it has no '='", kv)
			}
			if !validEnvName(k) || (bare && hasEq) {
				return fmt.Errorf("environment variable %.80q has no valid name: a name is printable ASCII without '=' or spaces", kv)
			}
			if strings.IndexByte(kv, 0) >= 0 {
				return fmt.Errorf("environment variable %s contains a NUL byte, which no environment can hold", k)
			}
		}
	}
	return nil
}

func validEnvName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] >= 0x7f || k[i] == '=' {
			return false
		}
	}
	return true
}

// sessionQuota serialises the count-then-insert of new sessions, so that
// concurrent creates cannot together pass the limit.
type sessionQuota struct{ mu sync.Mutex }

// underQuota checks, before anything is done for a new session, that owner
// may have one more running; claimSession checks again as it inserts.
func (s *Server) underQuota(ctx context.Context, owner string) (int, error) {
	s.quota.mu.Lock()
	defer s.quota.mu.Unlock()
	return s.quotaLocked(ctx, owner)
}

func (s *Server) quotaLocked(ctx context.Context, owner string) (int, error) {
	limit := s.cfg.MaxSessions
	if limit <= 0 {
		limit = DefaultMaxSessions
	}
	running, err := s.store.SessionsInState(ctx, store.StateRunning)
	if err != nil {
		return http.StatusInternalServerError, err
	}
	n := 0
	for _, r := range running {
		if r.Owner == owner {
			n++
		}
	}
	if n >= limit {
		return http.StatusConflict, fmt.Errorf("%s already has %d running sessions, the most this server allows (--max-sessions %d); "+
			"end some with `termkeep kill`, or raise --max-sessions", owner, n, limit)
	}
	return 0, nil
}

// claimSession puts sess in the registry unless its owner already has
// cfg.MaxSessions running sessions. On refusal it returns the status to
// answer and a sentence.
func (s *Server) claimSession(ctx context.Context, sess store.Session) (int, error) {
	s.quota.mu.Lock()
	defer s.quota.mu.Unlock()
	if status, err := s.quotaLocked(ctx, sess.Owner); err != nil {
		return status, err
	}
	if err := s.store.CreateSession(ctx, sess); err != nil {
		if errors.Is(err, store.ErrNameTaken) {
			if sess.Workspace != "" {
				return http.StatusConflict, fmt.Errorf("a session named %q already exists in workspace %s", sess.Name, sess.Workspace)
			}
			return http.StatusConflict, fmt.Errorf("a session named %q already exists", sess.Name)
		}
		return http.StatusInternalServerError, err
	}
	return 0, nil
}

// sessionNameProblem is nameProblem for a session's name, which may not be
// shaped like a session id either: api.SessionNameProblem.
func sessionNameProblem(name string) string { return api.SessionNameProblem(name) }
