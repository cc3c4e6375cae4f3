// Package service runs termkeep's server as a per-user service: a systemd
// user unit on Linux, a launchd agent on macOS.
//
// It guarantees that stopping, restarting or upgrading the service stops
// the server alone, never a session's holder (KillMode=process;
// AbandonProcessGroup), and that the service and the CLI use the same
// state directory. The unit and the agent are rendered from a Spec by
// pure functions (golden files in testdata); Decide says what an install
// does; every command (systemctl, loginctl, launchctl) goes through a
// Runner, which tests replace.
//
// KillMode=process rather than a scope per holder: a holder is started
// with setsid and reaped through a pidfd, so nothing ties it to the server
// but the unit's cgroup, and systemd's default KillMode=control-group would
// signal every holder at each restart and upgrade. tmux moves each pane
// into a transient scope of its own, which needs a D-Bus client (or a
// systemd-run process per session start) and a fallback where there is no
// user manager; KillMode=process gets the one property that matters, a stop
// that signals the server alone, with none of that. Its costs, accepted:
// the holders count in the unit's memory and CPU accounting (and under a
// MemoryMax= set on it), systemctl --user status lists them, and each start
// logs "Found left-over process" for each. SIGTERM is an orderly stop of
// the server, so the unit needs no ExecStop; at shutdown the user manager
// signals what is left, and holders record their sessions as interrupted.
//
// The login variables sessions need (PATH, SSH_AUTH_SOCK, LANG, DISPLAY,
// WAYLAND_DISPLAY) are written to an environment file of termkeep's own
// rather than imported into the user manager, which would change every
// unit's environment, last only until the manager restarts, and be
// invisible in the unit.
package service
