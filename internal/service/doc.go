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
package service
