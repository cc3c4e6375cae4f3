// Package sessiondir is the layout of one session's directory,
// <state>/sessions/<id>: the names of the files in it, and its meta.json,
// which the holder writes and the server, termkeep doctor and the tools
// read. It depends on nothing of theirs, so that each of them can read a
// session's directory without linking in the others.
package sessiondir

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"termkeep/internal/atomicfile"
)

// Meta is a session's meta.json: what the holder knows about its child,
// written atomically (temp file, fsync, rename) so a crash leaves the old or
// the new file, never half of one.
type Meta struct {
	ID        string    `json:"id"`
	Version   int       `json:"version"` // wire protocol version of the holder that wrote it
	HolderPid int       `json:"holder_pid"`
	Pid       int       `json:"pid"`
	Command   []string  `json:"command"`
	Cwd       string    `json:"cwd"`
	Cols      uint16    `json:"cols"`
	Rows      uint16    `json:"rows"`
	Env       []string  `json:"env,omitempty"` // the allowlisted subset only; never secrets
	StartedAt time.Time `json:"started_at"`
	// Name and Workspace are the session's name and workspace as the
	// server last told the holder, so that a registry rebuilt from
	// meta.json (termkeep doctor --rebuild) keeps them.
	Name      string `json:"name,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	// EnvPolicy is how the child's environment was made (Spec.EnvPolicy).
	EnvPolicy string `json:"env_policy,omitempty"`
	// BootID is the machine's boot the holder started in (package bootid;
	// "" when unknown): a server that finds a session of another boot
	// knows the machine restarted under it.
	BootID string `json:"boot_id,omitempty"`
	// Settings are the session's settings from the registry (its fields
	// are meta.json's own).
	Settings

	// Linger is the session's linger (holder.Spec.Linger) as a Go
	// duration, "0s" for none; a restore starts the new holder with it.
	// Empty in a meta.json from before it was kept: the server's default.
	Linger string `json:"linger,omitempty"`

	// Child is set when the child exited while processes it left behind
	// still hold its terminal: the holder reads their output for a while
	// (Spec.Linger) before it records the session's end below, and a
	// holder that dies meanwhile leaves the child's own exit known.
	Child *ChildExit `json:"child_exited,omitempty"`

	// ShutdownAt is set when the server told the holder the machine is
	// shutting down (logind's PrepareForShutdown), and cleared when the
	// shutdown is cancelled: the end that follows, or a holder killed
	// without recording one, is the shutdown's (cause "shutdown").
	ShutdownAt *time.Time `json:"shutdown_at,omitempty"`

	// Set once the session has ended.
	EndedAt  *time.Time `json:"ended_at,omitempty"`
	ExitCode *int       `json:"exit_code,omitempty"` // status, or 128+N for signal N
	Signal   int        `json:"signal,omitempty"`
	// Closed is set when the session ended because a Close frame asked for it
	// (kill), so a server that missed the end still records it as closed.
	Closed bool `json:"closed,omitempty"`
	// Interrupted is set when the machine or the service ended the
	// session, not its user nor the child itself: the holder was stopped
	// by SIGTERM (a shutdown), or the child died of the same stop. A
	// restore policy brings such a session back. No exit status is
	// recorded with it: the child did not end by itself.
	Interrupted bool `json:"interrupted,omitempty"`
	// Reason says why an interrupted session ended.
	Reason string `json:"reason,omitempty"`
	// End is the log offset after the child's last byte.
	End uint64 `json:"end,omitempty"`
}

// Settings are a session's settings in the registry that meta.json keeps
// as well, so that a registry rebuilt from meta.json (termkeep doctor
// --rebuild) restores the session as it was asked to be. The holder gets
// them at its start; they do not change while it runs.
type Settings struct {
	// AutoRestore has the server restore the session when it finds it
	// interrupted; RestoreCommand is what a restore runs ("" = Command).
	AutoRestore    bool   `json:"auto_restore,omitempty"`
	RestoreCommand string `json:"restore_command,omitempty"`
	// SizePolicy is how the size follows the viewers ("" = the server's).
	SizePolicy string `json:"size_policy,omitempty"`
	// NoShellIntegration is negative so that a meta.json from before
	// settings were kept reads as the default: integration on.
	NoShellIntegration bool `json:"no_shell_integration,omitempty"`
}

// State is the session's state as meta.json tells it: "running" until
// the holder records an end, then "closed", "interrupted" or "exited".
func (m Meta) State() string {
	switch {
	case m.EndedAt == nil:
		return "running"
	case m.Closed:
		return "closed"
	case m.Interrupted:
		return "interrupted"
	}
	return "exited"
}

// ChildExited reports whether the child is known to have exited by
// itself: the session ended "exited", or the holder recorded the child's
// exit while it read what the child left behind. A restore must never run
// such a job again.
func (m Meta) ChildExited() bool {
	return m.Child != nil || (m.EndedAt != nil && m.State() == "exited")
}

// The files of a session directory.
const (
	MetaFile    = "meta.json"   // Meta, written by the holder
	SocketFile  = "holder.sock" // the holder's socket, which the server dials
	LogDir      = "log"         // the output log (package outlog)
	LogFile     = "holder.log"  // the holder's own log: its errors and warnings
	LockFile    = "holder.lock" // flock held by the one holder that writes the log; holds its pid
	StatusFile  = "status"      // the status record (status.go), overwritten in place
	HistoryFile = "history"     // the shell's history: shell integration appends to it after every command, and a restored shell reads it back
)

// ReadMeta reads dir/meta.json, completed by the status record of the
// same run: an end the holder could record only there (a full disk) is
// read as if meta.json had it.
func ReadMeta(dir string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return m, fmt.Errorf("sessiondir: read meta: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("sessiondir: decode %s: %w", filepath.Join(dir, MetaFile), err)
	}
	if s, err := ReadStatus(dir); err == nil {
		s.complete(&m)
	}
	return m, nil
}

// WriteMeta writes dir/meta.json atomically and durably: a temporary
// file, fsync, rename, and an fsync of the directory so the rename itself
// is durable.
func WriteMeta(dir string, m Meta) error { return WriteMetaThrough(dir, m, nil) }

// WriteMetaThrough is WriteMeta writing the new file through through.
func WriteMetaThrough(dir string, m Meta, through Through) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("sessiondir: encode meta: %w", err)
	}
	var wrap func(*os.File) io.Writer
	if through != nil {
		wrap = func(f *os.File) io.Writer { return through(f) }
	}
	if err := atomicfile.WriteThrough(filepath.Join(dir, MetaFile), append(b, '\n'), true, wrap); err != nil {
		return fmt.Errorf("sessiondir: %w", err)
	}
	return nil
}
