// Package logindtest runs a private D-Bus daemon with a fake logind on
// it, for tests of what termkeep does when the machine shuts down. The
// fake answers Manager.Inhibit with one end of a pipe, as logind answers
// with a FIFO, and emits PrepareForShutdown when told.
package logindtest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// Bus is a private dbus-daemon.
type Bus struct {
	// Address is the bus's D-Bus address, for DBUS_SYSTEM_BUS_ADDRESS.
	Address string
	cmd     *exec.Cmd
}

// Stop ends the daemon: every connection to it is lost.
func (b *Bus) Stop() {
	b.cmd.Process.Kill()
	b.cmd.Wait()
}

// StartBus starts a private dbus-daemon that t stops at its end. It skips
// t, saying why, when dbus-daemon is not installed.
func StartBus(t testing.TB) *Bus {
	t.Helper()
	bin, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon is not installed (Debian's package dbus-daemon): the logind tests need a private bus")
	}
	// A short directory: a unix socket's path is at most 107 bytes.
	dir, err := os.MkdirTemp("", "tkbus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(busConfig, filepath.Join(dir, "bus"))), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config-file="+conf, "--nofork", "--nopidfile", "--print-address")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	b := &Bus{cmd: cmd}
	t.Cleanup(b.Stop)
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case a := <-line:
		if a == "" {
			t.Fatal("dbus-daemon printed no address")
		}
		b.Address = a
		return b
	case <-time.After(10 * time.Second):
		t.Fatal("dbus-daemon printed no address within 10 s")
	}
	return nil
}

// busConfig lets anyone on the private bus own any name and send
// anything: the fake must own logind's name.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// Logind is a fake org.freedesktop.login1 on a Bus.
type Logind struct {
	conn   *dbus.Conn
	mu     sync.Mutex // guards the fields below
	locks  []*Lock
	refuse error
}

// Lock is one inhibitor lock the fake gave.
type Lock struct {
	What, Who, Why, Mode string
	r, w                 *os.File // the fake keeps both ends
	ino                  uint64
}

// NewLogind puts a fake logind on the bus at address; t closes it.
func NewLogind(t testing.TB, address string) *Logind {
	t.Helper()
	c, err := dbus.Connect(address)
	if err != nil {
		t.Fatalf("connect to the private bus: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	l := &Logind{conn: c}
	if err := c.Export(manager{l}, "/org/freedesktop/login1", "org.freedesktop.login1.Manager"); err != nil {
		t.Fatal(err)
	}
	reply, err := c.RequestName("org.freedesktop.login1", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own org.freedesktop.login1: %v (reply %d)", err, reply)
	}
	t.Cleanup(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, lk := range l.locks {
			lk.r.Close()
			lk.w.Close()
		}
	})
	return l
}

// Refuse makes every Inhibit from now on fail with err (nil: succeed).
func (l *Logind) Refuse(err error) {
	l.mu.Lock()
	l.refuse = err
	l.mu.Unlock()
}

// PrepareForShutdown emits the signal, as logind does when a shutdown
// begins (true) or is cancelled (false).
func (l *Logind) PrepareForShutdown(start bool) error {
	return l.conn.Emit("/org/freedesktop/login1", "org.freedesktop.login1.Manager.PrepareForShutdown", start)
}

// Locks returns the locks given so far.
func (l *Logind) Locks() []*Lock {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*Lock(nil), l.locks...)
}

// manager is the exported object: its methods are Manager's.
type manager struct{ l *Logind }

func (m manager) Inhibit(what, who, why, mode string) (dbus.UnixFD, *dbus.Error) {
	m.l.mu.Lock()
	defer m.l.mu.Unlock()
	if m.l.refuse != nil {
		return -1, dbus.MakeFailedError(m.l.refuse)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return -1, dbus.MakeFailedError(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(w.Fd()), &st); err != nil {
		return -1, dbus.MakeFailedError(err)
	}
	m.l.locks = append(m.l.locks, &Lock{What: what, Who: who, Why: why, Mode: mode, r: r, w: w, ino: st.Ino})
	return dbus.UnixFD(w.Fd()), nil
}

// HeldBy reports whether process pid holds the lock: has a descriptor of
// its pipe open (the fake's own two excepted). The lock is released when
// no process other than the fake holds it.
func (lk *Lock) HeldBy(pid int) (bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	want := fmt.Sprintf("pipe:[%d]", lk.ino)
	for _, e := range ents {
		if pid == os.Getpid() && (e.Name() == fmt.Sprint(lk.r.Fd()) || e.Name() == fmt.Sprint(lk.w.Fd())) {
			continue
		}
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == want {
			return true, nil
		}
	}
	return false, nil
}

// ErrRefused is what a test passes to Refuse for a logind that says no
// (polkit's answer to a user without the right).
var ErrRefused = errors.New("access denied")
