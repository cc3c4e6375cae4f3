package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// latHolderLane is latHolder with an output lane (docs/architecture.md,
// Lanes): the bench, speaking to the holder as the server
// would, hands it a terminal (a pty's slave side, non-blocking) and reads
// the echo from that pty's master, as a terminal emulator would, instead
// of from the holder's socket. It measures the holder's half of the lane
// beside the `holder socket` row, in the same run.
func latHolderLane(ctx context.Context, e *env, keys int) (latSample, error) {
	srv, c, w, r, err := holderAsServer(ctx, e)
	if err != nil {
		return latSample{}, err
	}
	defer srv.close()
	defer c.Close()
	var buf []byte
	f, err := wire.ReadFrame(r, &buf)
	if err != nil || f.Type != wire.TypeWelcome {
		return latSample{}, fmt.Errorf("the holder's welcome: %v (a %s frame)", err, f.Type)
	}
	var wel wire.Welcome
	if err := wire.ParseJSON(f.Payload, &wel); err != nil {
		return latSample{}, err
	}
	if wel.Version < 6 {
		return latSample{}, fmt.Errorf("%w: the holder speaks protocol %d, without lanes", errSkipped, wel.Version)
	}
	master, tty, err := pty.Open()
	if err != nil {
		return latSample{}, err
	}
	defer master.Close()
	pty.Setsize(master, winsize)
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		tty.Close()
		return latSample{}, err
	}
	slave, err := os.OpenFile(tty.Name(), os.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	tty.Close()
	if err != nil {
		return latSample{}, err
	}
	frame := []byte{byte(wire.TypeLane), 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0}
	for i := range 8 {
		frame[5+i] = byte(wel.End >> (56 - 8*i))
	}
	_, _, err = c.WriteMsgUnix(frame, unix.UnixRights(int(slave.Fd())), nil)
	slave.Close()
	if err != nil {
		return latSample{}, fmt.Errorf("hand the holder a lane: %w", err)
	}
	// The holder's stream still carries every byte: read it so its
	// socket never fills, and say when the lane ends (its echo stops).
	ended := make(chan uint64, 1)
	go func() {
		var buf []byte
		for {
			f, err := wire.ReadFrame(r, &buf)
			if err != nil {
				return
			}
			if f.Type == wire.TypeLaneEnd {
				end, _ := wire.ParseUint64(f.Type, f.Payload)
				ended <- end
				return
			}
		}
	}()
	s, err := measureEcho(ctx, newPtySource(master), w.Input, keys)
	select {
	case end := <-ended:
		if err == nil {
			err = fmt.Errorf("the lane ended at %d during the run", end)
		}
	default:
	}
	return s, err
}

// holderAsServer starts a session running cat, kills the server, and
// speaks to the session's holder as a server would: it returns the
// connection after its hello (the welcome not yet read).
func holderAsServer(ctx context.Context, e *env) (*tkServer, *net.UnixConn, *wire.Writer, *bufio.Reader, error) {
	srv, sess, err := catSession(ctx, e)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	fail := func(err error) (*tkServer, *net.UnixConn, *wire.Writer, *bufio.Reader, error) {
		srv.close()
		return nil, nil, nil, nil, err
	}
	if _, err := srv.stop(syscall.SIGKILL, 5*time.Second); err != nil {
		return fail(err)
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: filepath.Join(string(srv.dir), "sessions", sess.ID, sessiondir.SocketFile), Net: "unix"})
	if err != nil {
		return fail(fmt.Errorf("dial the holder: %w", err))
	}
	w := wire.NewWriter(c)
	if err := w.JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: wire.RoleServer, From: wire.FromEnd}); err != nil {
		c.Close()
		return fail(err)
	}
	return srv, c, w, bufio.NewReaderSize(c, 64<<10), nil
}
