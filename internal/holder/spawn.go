package holder

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"termkeep/internal/bootid"
)

// Process is a holder started by Spawn. Wait must be called (the server does
// it in a goroutine) so an exited holder does not linger as a zombie while
// the server that started it lives; once the server is gone, init reaps it.
type Process struct {
	Ready
	cmd *exec.Cmd
}

// Wait waits for the holder process to exit, and reaps it.
func (p *Process) Wait() error { return reap(p.cmd) }

// Reaped waits for the holder in a goroutine of its own (Wait) and
// returns a channel closed once it has exited and been reaped. Call it
// (or Wait) once.
func (p *Process) Reaped() <-chan struct{} {
	c := make(chan struct{})
	go func() { p.Wait(); close(c) }()
	return c
}

// Spawn starts a holder with argv (the holder binary, or the termkeep binary
// and its hidden holder argument), sends it spec on stdin and waits up to
// timeout for its Ready answer. The holder runs in a session of its own
// (setsid), so signals aimed at the server's terminal or process group never
// reach it, and it outlives the server.
func Spawn(argv []string, spec Spec, timeout time.Duration) (*Process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GOMAXPROCS=1", "GOGC=50"}
	if f := os.Getenv(bootid.EnvVar); f != "" {
		// The holder records the boot it runs in as the server reads it.
		cmd.Env = append(cmd.Env, bootid.EnvVar+"="+f)
	}
	if v := os.Getenv(laneEnv); v != "" {
		// The switch for A/B runs (lane.go) is set on the server.
		cmd.Env = append(cmd.Env, laneEnv+"="+v)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("holder: spawn: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("holder: spawn: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("holder: start %s: %w", argv[0], err)
	}
	p := &Process{cmd: cmd}
	b, _ := json.Marshal(spec)
	go func() {
		stdin.Write(b)
		stdin.Close()
	}()
	type result struct {
		r   Ready
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var r Ready
		line, err := bufio.NewReader(stdout).ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &r)
		}
		ch <- result{r, err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, fmt.Errorf("holder: no answer from the holder: %w", res.err)
		}
		if res.r.Error != "" {
			cmd.Wait()
			return nil, errors.New(res.r.Error)
		}
		// The holder has pointed its stdout at /dev/null: the pipe has
		// served, and is not kept for the holder's life.
		stdout.Close()
		p.Ready = res.r
		return p, nil
	case <-time.After(timeout):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("holder: no answer within %s", timeout)
	}
}
