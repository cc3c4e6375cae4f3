package service

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"termkeep/internal/atomicfile"
)

// LaunchAgent installs the server as a launchd agent of the user's GUI
// domain (macOS). Each step it takes is a line on Out.
type LaunchAgent struct {
	Run      Runner
	AgentDir string // ~/Library/LaunchAgents
	UID      int
	Out      io.Writer
	// Server and Wait are as Systemd's.
	Server Server
	Wait   time.Duration
}

func (m *LaunchAgent) plistPath() string { return filepath.Join(m.AgentDir, Label+".plist") }
func (m *LaunchAgent) domain() string    { return fmt.Sprintf("gui/%d", m.UID) }
func (m *LaunchAgent) target() string    { return m.domain() + "/" + Label }

func (m *LaunchAgent) say(format string, args ...any) { fmt.Fprintf(m.Out, format+"\n", args...) }

func (m *LaunchAgent) print(ctx context.Context) (Launchd, bool) {
	out, err := m.Run.Run(ctx, "launchctl", "print", m.target())
	if err != nil {
		return Launchd{}, false
	}
	return ParseLaunchctlPrint(out), true
}

func (m *LaunchAgent) launchctl(ctx context.Context, args ...string) error {
	out, err := m.Run.Run(ctx, "launchctl", args...)
	if err != nil {
		return fmt.Errorf("launchctl %s: %s", args[0], firstLine(out, err))
	}
	return nil
}

// Install writes the agent and loads it, which starts the server. An
// agent already loaded is restarted (kickstart -k): launchd tells no
// binary from another, and a restart stops the server alone
// (AbandonProcessGroup), so sessions keep running. A changed agent is
// unloaded and loaded again, for launchd reads it only then.
func (m *LaunchAgent) Install(ctx context.Context, s Spec) error {
	want := Plist(s)
	onDisk, err := readOrNil(m.plistPath())
	if err != nil {
		return fmt.Errorf("read the agent: %w", err)
	}
	changed := !bytes.Equal(onDisk, want)
	if s.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(s.LogFile), 0o700); err != nil {
			return fmt.Errorf("make the log's directory: %w", err)
		}
	}
	if changed {
		if err := os.MkdirAll(m.AgentDir, 0o755); err != nil {
			return fmt.Errorf("make the agents' directory: %w", err)
		}
		if err := atomicfile.Write(m.plistPath(), want, true); err != nil {
			return fmt.Errorf("write the agent: %w", err)
		}
		m.say("wrote %s", m.plistPath())
	}
	before, loaded := m.print(ctx)
	if err := stopOutside(ctx, m.Server, before.PID, m.say); err != nil {
		return err
	}
	switch {
	case loaded && changed:
		if err := m.launchctl(ctx, "bootout", m.target()); err != nil {
			return err
		}
		if err := m.launchctl(ctx, "bootstrap", m.domain(), m.plistPath()); err != nil {
			return err
		}
		now, _ := m.print(ctx)
		m.say("loaded the changed agent and restarted the server (pid %d, now pid %d); sessions keep running", before.PID, now.PID)
	case loaded:
		if err := m.launchctl(ctx, "kickstart", "-k", m.target()); err != nil {
			return err
		}
		now, _ := m.print(ctx)
		m.say("restarted the server (pid %d, now pid %d); sessions keep running", before.PID, now.PID)
	default:
		if err := m.launchctl(ctx, "bootstrap", m.domain(), m.plistPath()); err != nil {
			return err
		}
		now, _ := m.print(ctx)
		m.say("loaded %s: the server runs (pid %d) and starts at each login", m.target(), now.PID)
	}
	now, _ := m.print(ctx)
	return awaitServer(ctx, m.Server, now.PID, m.Wait, s.LogFile)
}

// Uninstall unloads the agent, which stops the server (not the
// sessions), and removes it.
func (m *LaunchAgent) Uninstall(ctx context.Context) error {
	onDisk, err := readOrNil(m.plistPath())
	if err != nil {
		return fmt.Errorf("read the agent: %w", err)
	}
	_, loaded := m.print(ctx)
	if onDisk == nil && !loaded {
		m.say("the termkeep service is not installed (no %s)", m.plistPath())
		return nil
	}
	if loaded {
		if err := m.launchctl(ctx, "bootout", m.target()); err != nil {
			return err
		}
		m.say("stopped the server and unloaded %s; sessions keep running (the next termkeep command starts a server of its own)", m.target())
	}
	if err := os.Remove(m.plistPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the agent: %w", err)
	}
	m.say("removed %s", m.plistPath())
	return nil
}

// LaunchStatus is what `termkeep service status` says on macOS.
type LaunchStatus struct {
	PlistPath string
	Installed bool
	Loaded    bool
	Agent     Launchd
	Binary    string
}

// Status reads the agent's file and asks launchd about it.
func (m *LaunchAgent) Status(ctx context.Context) LaunchStatus {
	st := LaunchStatus{PlistPath: m.plistPath()}
	if b, err := os.ReadFile(st.PlistPath); err == nil {
		st.Installed, st.Binary = true, plistProgram(b)
	}
	st.Agent, st.Loaded = m.print(ctx)
	if st.Binary == "" {
		st.Binary = st.Agent.Program
	}
	return st
}

// plistProgram is the first of the agent's ProgramArguments.
func plistProgram(b []byte) string {
	if args := plistArgs(b); len(args) > 0 {
		return args[0]
	}
	return ""
}

// plistArgs is the agent's ProgramArguments (nil when it cannot be read).
func plistArgs(b []byte) []string {
	d := xml.NewDecoder(bytes.NewReader(b))
	var last string
	var args []string
	depth := 0 // inside ProgramArguments' array
	for {
		tok, err := d.Token()
		if err != nil {
			return args
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case t.Name.Local == "array" && last == "ProgramArguments":
				depth++
			case t.Name.Local == "string" && depth > 0:
				var s string
				if d.DecodeElement(&s, &t) != nil {
					return nil
				}
				args = append(args, s)
			case t.Name.Local == "key":
				var k string
				if d.DecodeElement(&k, &t) != nil {
					return nil
				}
				last = k
			}
		case xml.EndElement:
			if t.Name.Local == "array" && depth > 0 {
				return args
			}
		}
	}
}

// Format writes the status for a person, one line a subject.
func (s LaunchStatus) Format(w io.Writer) {
	loaded := "not loaded: launchctl bootstrap gui/$(id -u) " + s.PlistPath
	if s.Loaded {
		loaded = "loaded"
	}
	if !s.Installed {
		fmt.Fprintf(w, "agent:       %s: not installed: termkeep service install\n", s.PlistPath)
	} else {
		fmt.Fprintf(w, "agent:       %s (installed, %s)\n", s.PlistPath, loaded)
	}
	if s.Loaded {
		fmt.Fprintf(w, "server:      %s, pid %d\n", orText(s.Agent.State, "unknown"), s.Agent.PID)
	}
	if s.Binary != "" {
		fmt.Fprintf(w, "binary:      %s\n", s.Binary)
	}
	fmt.Fprintln(w, "linger:      macOS has no linger: the agent runs while you are logged in")
}
