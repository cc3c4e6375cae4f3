package main

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"termkeep/internal/server"
	"termkeep/internal/statedir"
)

// serveConfig is the server's configuration as the CLI fills it: defaults,
// then TERMKEEP_* variables, then flags.
type serveConfig struct {
	logRetention string
	logSync      string
	killGrace    time.Duration
	holder       string
	logLevel     string
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
		Short: "Run the termkeep server in the foreground",
		Long: `Run the termkeep server in the foreground. Sessions keep running when it stops;
the next server picks them up. Other commands start one in the background when
none is running.

Every setting can also be given as an environment variable, named below; a flag
overrides its variable.`,
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
			level := slog.LevelInfo
			if err := level.UnmarshalText([]byte(sc.logLevel)); err != nil {
				return usageErr("--log-level: %v", err)
			}
			logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			srv, err := server.New(cmd.Context(), server.Config{
				StateDir: dir, HolderArgv: argv, LogRetention: retention, LogSync: sc.logSync,
				KillGrace: sc.killGrace, Version: version, Logger: logger,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stdout, `termkeep %s is serving %s
  create a session:   termkeep new --name work
  attach to it:       termkeep attach work     (detach with Ctrl-\)
  list sessions:      termkeep ls
Sessions keep running when this server stops (Ctrl-C).
`, version, dir)
			return srv.Serve(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&sc.logRetention, "log-retention", envOr("TERMKEEP_LOG_RETENTION", "64MiB"), "output kept on disk per session, e.g. 64MiB, 1GiB (env TERMKEEP_LOG_RETENTION)")
	f.StringVar(&sc.logSync, "log-sync", envOr("TERMKEEP_LOG_SYNC", "interval"), "fsync of output logs: interval (at most once a second), always, never (env TERMKEEP_LOG_SYNC)")
	grace, _ := time.ParseDuration(envOr("TERMKEEP_KILL_GRACE", "3s"))
	f.DurationVar(&sc.killGrace, "kill-grace", grace, "time between SIGHUP and SIGKILL when a session is killed (env TERMKEEP_KILL_GRACE)")
	f.StringVar(&sc.holder, "holder", os.Getenv("TERMKEEP_HOLDER"), "holder binary (env TERMKEEP_HOLDER; default: termkeep-holder beside termkeep)")
	f.StringVar(&sc.logLevel, "log-level", envOr("TERMKEEP_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env TERMKEEP_LOG_LEVEL)")
	return cmd
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
