package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// dtach is the minimal relay: a master process that owns the pty and copies
// it to the attached clients' sockets, with no log, no screen and no
// redraw. It is the floor for anything that keeps a session apart from its
// terminal, as termkeep does.

// dtachSession starts a dtach master running command in the foreground of
// a process of its own (so the bench knows its pid), and returns the
// socket, the master's pid and what stops it.
func dtachSession(e *env, command ...string) (sock string, master *exec.Cmd, stop func(), err error) {
	if _, err := exec.LookPath("dtach"); err != nil {
		return "", nil, nil, fmt.Errorf("%w: dtach is not installed", errSkipped)
	}
	e.seq++
	sock = filepath.Join(e.work, fmt.Sprintf("dtach-%d.sock", e.seq))
	master = exec.Command("dtach", append([]string{"-N", sock, "-E", "-z", "-r", "none"}, command...)...)
	master.Env = viewerEnv()
	master.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := master.Start(); err != nil {
		return "", nil, nil, fmt.Errorf("start dtach: %w", err)
	}
	stop = func() {
		syscall.Kill(-master.Process.Pid, syscall.SIGKILL)
		if c := firstChild(master.Process.Pid); c > 0 {
			syscall.Kill(-c, syscall.SIGKILL) // the child's own session
		}
		master.Wait()
		os.Remove(sock)
	}
	// The socket file exists from its bind, before the master listens: a
	// client that came then would be refused and exit.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return sock, master, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, nil, fmt.Errorf("dtach made no socket at %s", sock)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dtachAttach starts `dtach -a` on sock in a pty of the test size.
func dtachAttach(sock string) (*exec.Cmd, *os.File, func(), error) {
	cmd := exec.Command("dtach", "-a", sock, "-E", "-z", "-r", "none")
	cmd.Env = viewerEnv()
	ptmx, stop, err := startInPty(cmd)
	return cmd, ptmx, stop, err
}

// runDtach is the throughput contender: the workload through a dtach
// master and `dtach -a` in a pty.
func runDtach(ctx context.Context, e *env) (sample, error) {
	// dtach keeps nothing a client missed: the child waits for a first
	// key, typed once the client is attached, before its ready line.
	sock, master, stopMaster, err := dtachSession(e, "sh", "-c", "read y; "+e.m.childScript(e.file))
	if err != nil {
		return sample{}, err
	}
	defer stopMaster()
	cmd, ptmx, stop, err := dtachAttach(sock)
	if err != nil {
		return sample{}, err
	}
	defer stop()
	if err := waitRaw(ctx, ptmx); err != nil {
		return sample{}, fmt.Errorf("dtach -a: %w", err)
	}
	if _, err := ptmx.Write([]byte("\r")); err != nil {
		return sample{}, err
	}
	return timeRun(ctx, run{
		src:       newPtySource(ptmx),
		sendGo:    func() error { _, err := ptmx.Write([]byte("\r")); return err },
		abort:     func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) },
		findChild: func() int { return firstChild(master.Process.Pid) },
		ownerPid:  master.Process.Pid,
		viewerPid: cmd.Process.Pid,
	}, e.m)
}

// latDtach is the echo contender: cat under a dtach master, typed into
// `dtach -a` in a pty.
func latDtach(ctx context.Context, e *env, keys int) (latSample, error) {
	sock, _, stopMaster, err := dtachSession(e, "cat")
	if err != nil {
		return latSample{}, err
	}
	defer stopMaster()
	_, ptmx, stop, err := dtachAttach(sock)
	if err != nil {
		return latSample{}, err
	}
	defer stop()
	if err := waitRaw(ctx, ptmx); err != nil {
		return latSample{}, fmt.Errorf("dtach -a: %w", err)
	}
	return measureEcho(ctx, newPtySource(ptmx), func(p []byte) error { _, err := ptmx.Write(p); return err }, keys)
}
