//go:build !lean

package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"termkeep/internal/server"
	"termkeep/internal/session/sizepolicy"
	"termkeep/internal/statedir"
	"termkeep/web"
)

// serveConfig is the server's configuration as the CLI fills it: defaults,
// then TERMKEEP_* variables, then flags.
type serveConfig struct {
	viewerQueue   string
	pingInterval  time.Duration
	pongTimeout   time.Duration
	holderTimeout time.Duration
	registryRetry time.Duration
	sizePolicy    string
	logRetention  string
	logSync       string
	killGrace     time.Duration
	holder        string
	logLevel      string
	logFormat     string
	listen        string
	orphanGrace   string
	idleTimeout   string
	quietAfter    string
	// The TCP listener's security and the sessions per user (docs/security.md).
	tlsCert, tlsKey string
	insecureNoTLS   bool
	allowedOrigins  []string
	maxSessions     string
	maxViewers      string
	keepEnded       string
	keepEndedBytes  string
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func newServeCmd(g *globals) *cobra.Command {
	var sc serveConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: serveShort,
		Long: `Run the termkeep server in the foreground. Sessions keep running when it stops;
the next server picks them up. Other commands start one in the background when
none is running.

On a terminal it prints the address to open in a browser, access token
included; when its output goes elsewhere (server.log, a service's journal) it
writes no token and points to termkeep url instead.

Every setting can also be given as an environment variable, named below; a flag
overrides its variable.

Each holder records the machine's boot id (/proc/sys/kernel/random/boot_id;
off Linux the boot time) in its session's meta.json, so that the server tells a
session the machine's restart ended from one whose holder alone died.
TERMKEEP_BOOT_ID_FILE names a file to read the boot id from instead (a
container whose boot id is its host's, or a test playing a reboot).`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := statedir.Resolve(g.stateDir)
			if err != nil {
				return err
			}
			retention, err := parseBytes(sc.logRetention)
			if err != nil {
				return usageErr("--log-retention: %v", err)
			}
			switch sc.logSync {
			case "interval", "always", "never":
			default:
				return usageErr("--log-sync must be interval, always or never, not %q", sc.logSync)
			}
			argv := []string{sc.holder}
			if sc.holder == "" {
				if argv, err = holderArgv(); err != nil {
					return err
				}
			}
			queue, err := parseBytes(sc.viewerQueue)
			if err != nil {
				return usageErr("--viewer-queue: %v", err)
			}
			policy, err := sizepolicy.Parse(sc.sizePolicy)
			if err != nil {
				return usageErr("--size-policy: %v", err)
			}
			orphanGrace, err := policyFlag(cmd, "orphan-grace", "TERMKEEP_ORPHAN_GRACE", sc.orphanGrace)
			if err != nil {
				return err
			}
			idleTimeout, err := policyFlag(cmd, "idle-timeout", "TERMKEEP_IDLE_TIMEOUT", sc.idleTimeout)
			if err != nil {
				return err
			}
			quietAfter, err := policyFlag(cmd, "quiet-after", "TERMKEEP_QUIET_AFTER", sc.quietAfter)
			if err != nil {
				return err
			}
			if quietAfter == 0 {
				quietAfter = -1 // 0 turns it off here; server.Config's 0 is the default
			}
			if err := listenSecurity(cmd, &sc); err != nil {
				return err
			}
			listenFrom := "default"
			switch {
			case cmd.Flags().Changed("listen"):
				listenFrom = "--listen"
			case os.Getenv("TERMKEEP_LISTEN") != "":
				listenFrom = "TERMKEEP_LISTEN"
			}
			if err := checkListen(listenAddr(sc.listen), listenFrom != "default"); err != nil {
				if listenFrom == "default" {
					listenFrom = "--listen"
				}
				return usageErr("%s %s: %v", listenFrom, sc.listen, err)
			}
			maxSessions, err := strconv.Atoi(sc.maxSessions)
			if err != nil || maxSessions < 1 {
				if cmd.Flags().Changed("max-sessions") {
					return usageErr("--max-sessions must be a number of sessions, at least 1, not %q", sc.maxSessions)
				}
				return usageErr("TERMKEEP_MAX_SESSIONS must be a number of sessions, at least 1, not %q", sc.maxSessions)
			}
			maxViewers, err := strconv.Atoi(sc.maxViewers)
			if err != nil || maxViewers < 1 {
				return usageErr("--max-viewers-per-token (TERMKEEP_MAX_VIEWERS_PER_TOKEN) must be a number of viewers, at least 1, not %q", sc.maxViewers)
			}
			keepEnded, err := strconv.Atoi(sc.keepEnded)
			if err != nil || keepEnded < 0 {
				return usageErr("--keep-ended (TERMKEEP_KEEP_ENDED) must be a number of sessions, 0 for no limit, not %q", sc.keepEnded)
			}
			var keepEndedBytes int64
			if strings.TrimSpace(sc.keepEndedBytes) != "0" {
				keepEndedBytes, err = parseBytes(sc.keepEndedBytes)
			}
			if err != nil {
				return usageErr("--keep-ended-bytes (TERMKEEP_KEEP_ENDED_BYTES): %v", err)
			}
			// 0 is no limit here; server.Config's 0 is the default.
			if keepEnded == 0 {
				keepEnded = -1
			}
			if keepEndedBytes == 0 {
				keepEndedBytes = -1
			}
			logger, err := newLogger(sc.logFormat, sc.logLevel)
			if err != nil {
				return err
			}
			// The standard log package too (net/http's own complaints): every
			// line on stderr is in the one format.
			slog.SetDefault(logger)
			srv, err := server.New(cmd.Context(), server.Config{
				StateDir: dir, HolderArgv: argv, LogRetention: retention, LogSync: sc.logSync,
				KillGrace: sc.killGrace, Version: version, Logger: logger,
				ViewerQueue: int(queue), PingInterval: sc.pingInterval, PongTimeout: sc.pongTimeout, HolderTimeout: sc.holderTimeout, SizePolicy: policy,
				RegistryRetry: sc.registryRetry,
				Listen:        listenAddr(sc.listen), ListenFrom: listenFrom, WebUI: web.Handler(),
				OrphanGrace: orphanGrace, IdleTimeout: idleTimeout, QuietAfter: quietAfter,
				TLSCert: sc.tlsCert, TLSKey: sc.tlsKey, InsecureNoTLS: sc.insecureNoTLS,
				AllowedOrigins: sc.allowedOrigins, MaxSessions: maxSessions, MaxViewersPerToken: maxViewers,
				KeepEnded: keepEnded, KeepEndedBytes: keepEndedBytes,
			})
			if err != nil {
				return err
			}
			me := selfName()
			fmt.Fprintf(os.Stdout, `termkeep %s is serving %s
  create a session:   %s new --name work
  attach to it:       %s attach work     (detach with Ctrl-\)
  list sessions:      %s ls
Sessions keep running when this server stops (Ctrl-C).
`, version, dir, me, me, me)
			if u := srv.BrowserURL(); u != "" {
				// The address carries the access token: a person at a
				// terminal reads it, but a file (the server.log of a server
				// started in the background, a service's journal) must never
				// hold a credential.
				if term.IsTerminal(int(os.Stdout.Fd())) {
					fmt.Fprintf(os.Stdout, "open %s in a browser\n", u)
				} else {
					fmt.Fprintf(os.Stdout, "open the address `%s url` prints in a browser (it carries the access token, so it is not written here)\n", me)
				}
			}
			return srv.Serve(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&sc.logRetention, "log-retention", envOr("TERMKEEP_LOG_RETENTION", "64MiB"), "output kept on disk per session, e.g. 64MiB, 1GiB; up to twice it while the server works through a burst (env TERMKEEP_LOG_RETENTION)")
	f.StringVar(&sc.logSync, "log-sync", envOr("TERMKEEP_LOG_SYNC", "interval"), "fsync of output logs: interval (at most once a second), always, never (env TERMKEEP_LOG_SYNC)")
	grace, _ := time.ParseDuration(envOr("TERMKEEP_KILL_GRACE", "3s"))
	f.DurationVar(&sc.killGrace, "kill-grace", grace, "time between SIGHUP and SIGKILL when a session is killed (env TERMKEEP_KILL_GRACE)")
	f.StringVar(&sc.holder, "holder", os.Getenv("TERMKEEP_HOLDER"), "holder binary (env TERMKEEP_HOLDER; default: termkeep-holder beside termkeep)")
	f.StringVar(&sc.viewerQueue, "viewer-queue", envOr("TERMKEEP_VIEWER_QUEUE", "1MiB"), "how far a viewer may fall behind before it skips to the present with a snapshot (env TERMKEEP_VIEWER_QUEUE)")
	ping, _ := time.ParseDuration(envOr("TERMKEEP_PING_INTERVAL", "30s"))
	f.DurationVar(&sc.pingInterval, "ping-interval", ping, "how often viewers are pinged (env TERMKEEP_PING_INTERVAL)")
	pong, _ := time.ParseDuration(envOr("TERMKEEP_PONG_TIMEOUT", "10s"))
	f.DurationVar(&sc.pongTimeout, "pong-timeout", pong, "a viewer silent this long after a ping is dropped (env TERMKEEP_PONG_TIMEOUT)")
	holderTimeout, _ := time.ParseDuration(envOr("TERMKEEP_HOLDER_TIMEOUT", "10s"))
	f.DurationVar(&sc.holderTimeout, "holder-timeout", holderTimeout, "a holder that does not answer a ping this long is shown unresponsive (a kill then SIGKILLs it), and a write it does not take within this fails (env TERMKEEP_HOLDER_TIMEOUT)")
	registryRetry, _ := time.ParseDuration(envOr("TERMKEEP_REGISTRY_RETRY", "10s"))
	f.DurationVar(&sc.registryRetry, "registry-retry", registryRetry, "the longest wait before writing again a session's end the registry refused (locked, read-only, a full disk); the first retry comes after an eighth of it (env TERMKEEP_REGISTRY_RETRY)")
	f.StringVar(&sc.sizePolicy, "size-policy", envOr("TERMKEEP_SIZE_POLICY", "latest"), "whose size a session takes when viewers differ: latest (the last to type or fit), smallest, largest or fixed (the size it was created at, or termkeep resize's) (env TERMKEEP_SIZE_POLICY)")
	f.StringVar(&sc.listen, "listen", envOr("TERMKEEP_LISTEN", "127.0.0.1:7420"), "TCP address for browsers (port 0: any free port; off: none); termkeep url prints the address to open (env TERMKEEP_LISTEN)")
	f.StringVar(&sc.orphanGrace, "orphan-grace", envOr("TERMKEEP_ORPHAN_GRACE", "0"), "end a session this long after its last viewer left, e.g. 10m or 600 (seconds); 0: never (env TERMKEEP_ORPHAN_GRACE)")
	f.StringVar(&sc.idleTimeout, "idle-timeout", envOr("TERMKEEP_IDLE_TIMEOUT", "0"), "end a session with no output and no input for this long, e.g. 1h; 0: never (env TERMKEEP_IDLE_TIMEOUT)")
	f.StringVar(&sc.quietAfter, "quiet-after", envOr("TERMKEEP_QUIET_AFTER", "2s"), "a session that prints nothing this long is quiet, likely waiting for input (quiet_since, the session.quiet event); 0: never (env TERMKEEP_QUIET_AFTER)")
	f.StringVar(&sc.tlsCert, "tls-cert", os.Getenv("TERMKEEP_TLS_CERT"), "PEM certificate (chain) file: the listener serves HTTPS and WSS; needs --tls-key (env TERMKEEP_TLS_CERT)")
	f.StringVar(&sc.tlsKey, "tls-key", os.Getenv("TERMKEEP_TLS_KEY"), "PEM private key file of --tls-cert (env TERMKEEP_TLS_KEY)")
	f.BoolVar(&sc.insecureNoTLS, "insecure-no-tls", false, "allow plain HTTP on a --listen address that is not loopback: the token and keystrokes cross the network readable (env TERMKEEP_INSECURE_NO_TLS=1)")
	f.StringArrayVar(&sc.allowedOrigins, "allowed-origin", splitList(os.Getenv("TERMKEEP_ALLOWED_ORIGINS")), "another origin whose pages may use the listener, e.g. https://term.example.com (a proxy or DNS name in front); repeatable (env TERMKEEP_ALLOWED_ORIGINS, comma-separated)")
	f.StringVar(&sc.maxSessions, "max-sessions", envOr("TERMKEEP_MAX_SESSIONS", "1000"), "running sessions one user may have; a create beyond it is refused (env TERMKEEP_MAX_SESSIONS)")
	f.StringVar(&sc.maxViewers, "max-viewers-per-token", envOr("TERMKEEP_MAX_VIEWERS_PER_TOKEN", strconv.Itoa(server.DefaultMaxViewersPerToken)), "browser viewers one share link or user token may have open at once (the owner token is not counted); one more is refused with 429 (env TERMKEEP_MAX_VIEWERS_PER_TOKEN)")
	f.StringVar(&sc.keepEnded, "keep-ended", envOr("TERMKEEP_KEEP_ENDED", "500"), "exited and closed sessions kept with their logs; past it the oldest ended are removed, as by termkeep rm (interrupted and paused ones are never removed); 0: no limit (env TERMKEEP_KEEP_ENDED)")
	f.StringVar(&sc.keepEndedBytes, "keep-ended-bytes", envOr("TERMKEEP_KEEP_ENDED_BYTES", "10GiB"), "total size on disk of the kept exited and closed sessions (their logs and screen checkpoints); past it the oldest ended are removed; 0: no limit (env TERMKEEP_KEEP_ENDED_BYTES)")
	f.StringVar(&sc.logLevel, "log-level", envOr("TERMKEEP_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env TERMKEEP_LOG_LEVEL)")
	f.StringVar(&sc.logFormat, "log-format", envOr("TERMKEEP_LOG_FORMAT", "text"), "log format on stderr: text (key=value) or json (one object a line) (env TERMKEEP_LOG_FORMAT)")
	return cmd
}

// newLogger is the server's logger on stderr: format text or json, at
// level debug, info, warn or error.
func newLogger(format, level string) (*slog.Logger, error) {
	var lv slog.Level
	switch strings.ToLower(strings.TrimSpace(level)) {
	case "debug":
		lv = slog.LevelDebug
	case "info", "":
		lv = slog.LevelInfo
	case "warn", "warning":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	default:
		return nil, usageErr("--log-level must be debug, info, warn or error, not %q", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "text", "":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, usageErr("--log-format must be text or json, not %q", format)
}

// parseBytes reads sizes like 64MiB, 1GiB, 512KiB, 1000000.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 64MiB)", s)
	}
	return n * mult, nil
}

// selfName is how to run this binary from the shell it was started in:
// "termkeep" when that is what PATH finds, else the path it was run by
// (bin/termkeep from make run), so that the commands it prints work as
// shown. termkeep-server, run by the lean termkeep beside it, names that.
func selfName() string {
	exe, err := os.Executable()
	if err != nil {
		return "termkeep"
	}
	exe = frontBinary(exe, func(p string) bool { _, err := os.Stat(p); return err == nil })
	if p, err := exec.LookPath("termkeep"); err == nil {
		if a, b := canonical(p), canonical(exe); a != "" && a == b {
			return "termkeep"
		}
	}
	if strings.ContainsRune(os.Args[0], '/') {
		return os.Args[0]
	}
	return exe
}

func canonical(p string) string {
	p, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	p, _ = filepath.Abs(p)
	return p
}

// listenAddr maps the --listen values that turn the TCP listener off to "".
func listenAddr(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "off", "none", "no", "false":
		return ""
	}
	return strings.TrimSpace(v)
}

// checkListen says what is wrong with a --listen address ("" is off). An
// address given on purpose (explicit) must also be free: a server that
// started without the listener asked for would look fine and not be
// reachable. The default one may be taken (by another user's server, say):
// the server then serves its unix socket alone and says so in its log.
func checkListen(addr string, explicit bool) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("not HOST:PORT (for example 127.0.0.1:7420, [::1]:7420, 127.0.0.1:0 for any free port, or off)")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		if err != nil {
			return fmt.Errorf("port %q is not a number (for example 127.0.0.1:7420)", port)
		}
		return fmt.Errorf("port %d is out of range (0-65535)", n)
	}
	if !explicit {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return errors.New("that address is in use (by another termkeep server or another program): pick another port, port 0 for any free one, or off")
		}
		return fmt.Errorf("cannot listen there: %v", err)
	}
	ln.Close()
	return nil
}

// policyFlag reads a session policy's duration from its flag, or from its
// variable when the flag was not given, and names whichever was wrong.
func policyFlag(cmd *cobra.Command, flag, env, v string) (time.Duration, error) {
	d, err := server.ParsePolicyDuration(v)
	if err == nil {
		return d, nil
	}
	if cmd.Flags().Changed(flag) {
		return 0, usageErr("--%s: %v", flag, err)
	}
	return 0, usageErr("%s: %v", env, err)
}

// listenSecurity fills in --insecure-no-tls from its variable when the flag
// was not given.
func listenSecurity(cmd *cobra.Command, sc *serveConfig) error {
	if v := os.Getenv("TERMKEEP_INSECURE_NO_TLS"); v != "" && !cmd.Flags().Changed("insecure-no-tls") {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return usageErr("TERMKEEP_INSECURE_NO_TLS must be 1 or 0 (true or false), not %q", v)
		}
		sc.insecureNoTLS = b
	}
	return nil
}

// splitList splits a comma-separated variable, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
