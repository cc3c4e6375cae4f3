// Package logind readies termkeep for a shutdown of the machine where
// systemd-logind runs: it holds a "delay" inhibitor lock and, when logind
// announces the shutdown (PrepareForShutdown(true)), has the caller ready
// every session before letting the lock go, so the work is done before
// the signals come rather than in the seconds between SIGTERM and SIGKILL.
//
// It guarantees that the lock is let go once the sessions are ready or a
// bounded time has passed (Options.Budget, well under logind's
// InhibitDelayMaxSec), whichever comes first, and whenever the watcher
// stops or the bus is lost: termkeep never holds up a shutdown for longer.
// Without a system bus it does nothing; the holders' own handling of
// SIGTERM still records the sessions as interrupted.
//
// The decisions are Machine's (pure, single-threaded); Watch is the thin
// shell that talks to the bus through Conn, which tests fake.
package logind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/godbus/dbus/v5"
)

// Conn is what the watcher needs of logind's Manager
// (org.freedesktop.login1.Manager) on the system bus.
type Conn interface {
	// Inhibit takes an inhibitor lock (what, who, why, mode as logind's
	// Inhibit takes them). The lock is held until the returned file is
	// closed; the caller owns it.
	Inhibit(ctx context.Context, what, who, why, mode string) (*os.File, error)
	// Shutdowns delivers the argument of each PrepareForShutdown signal,
	// in order. It is closed when the bus connection is lost or closed.
	Shutdowns() <-chan bool
	// Close ends the connection; Shutdowns is closed.
	Close() error
}

// DefaultSystemBus is where the system bus listens when
// DBUS_SYSTEM_BUS_ADDRESS does not say.
const DefaultSystemBus = "/run/dbus/system_bus_socket"

// SystemBusAddress is the system bus's address: DBUS_SYSTEM_BUS_ADDRESS,
// else DefaultSystemBus when its socket exists; "" when there is none.
func SystemBusAddress() string {
	if a := os.Getenv("DBUS_SYSTEM_BUS_ADDRESS"); a != "" {
		return a
	}
	if _, err := os.Stat(DefaultSystemBus); err == nil {
		return "unix:path=" + DefaultSystemBus
	}
	return ""
}

// logind's names on the bus.
const (
	busName     = "org.freedesktop.login1"
	objectPath  = dbus.ObjectPath("/org/freedesktop/login1")
	managerName = "org.freedesktop.login1.Manager"
)

// callTimeout bounds each call to the bus.
const callTimeout = 5 * time.Second

// busConn is Conn over a godbus connection.
type busConn struct {
	c   *dbus.Conn
	out chan bool
}

// Dial connects to the bus at address (a D-Bus address such as
// "unix:path=/run/dbus/system_bus_socket") and subscribes to logind's
// PrepareForShutdown. The connection is closed when ctx ends.
func Dial(ctx context.Context, address string) (Conn, error) {
	c, err := dbus.Connect(address, dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("logind: connect to the bus at %s: %w", address, err)
	}
	sctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	// Only logind's own signal counts: the rule names its bus name, which
	// the bus resolves to logind's connection, so another client on the
	// bus cannot announce a shutdown.
	if err := c.AddMatchSignalContext(sctx, dbus.WithMatchSender(busName), dbus.WithMatchObjectPath(objectPath),
		dbus.WithMatchInterface(managerName), dbus.WithMatchMember("PrepareForShutdown")); err != nil {
		c.Close()
		return nil, fmt.Errorf("logind: subscribe to PrepareForShutdown: %w", err)
	}
	sigs := make(chan *dbus.Signal, 16)
	c.Signal(sigs)
	b := &busConn{c: c, out: make(chan bool, 16)}
	go b.relay(sigs)
	return b, nil
}

// relay passes on the argument of each PrepareForShutdown in sigs, until
// sigs is closed (the connection ended). A signal of another shape is
// dropped.
func (b *busConn) relay(sigs <-chan *dbus.Signal) {
	defer close(b.out)
	for s := range sigs {
		if v, ok := shutdownArg(s); ok {
			b.out <- v
		}
	}
}

// shutdownArg is PrepareForShutdown's argument when s is that signal.
func shutdownArg(s *dbus.Signal) (start, ok bool) {
	if s == nil || s.Name != managerName+".PrepareForShutdown" || s.Path != objectPath || len(s.Body) != 1 {
		return false, false
	}
	start, ok = s.Body[0].(bool)
	return start, ok
}

func (b *busConn) Inhibit(ctx context.Context, what, who, why, mode string) (*os.File, error) {
	var fd dbus.UnixFD
	err := b.c.Object(busName, objectPath).CallWithContext(ctx, managerName+".Inhibit", 0, what, who, why, mode).Store(&fd)
	if err != nil {
		return nil, fmt.Errorf("logind: inhibit %s: %w", what, err)
	}
	if fd < 0 {
		return nil, errors.New("logind: inhibit gave no file descriptor")
	}
	return os.NewFile(uintptr(fd), "logind-inhibitor"), nil
}

func (b *busConn) Shutdowns() <-chan bool { return b.out }

func (b *busConn) Close() error { return b.c.Close() }
