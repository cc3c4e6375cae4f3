package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"termkeep/internal/peercred"
	"termkeep/internal/statedir"
)

// UntrustedError is a state directory or a server the client will not talk
// to: the directory belongs to another user or others may write to it, or
// the process on its socket runs as another user. Nothing was sent.
type UntrustedError struct{ msg string }

func (e *UntrustedError) Error() string { return e.msg }

// dial connects to the server's socket in dir, as tmux's client does: the
// directory must be the user's own and writable by no one else before the
// socket in it is tried, and the process that listens on it must run as
// the user (SO_PEERCRED), before a byte is sent. Another user who could
// put a socket there, or answer on ours, would otherwise receive what the
// user types (termkeep send) and the environment of every new session.
func dial(ctx context.Context, dir statedir.Dir) (net.Conn, error) {
	if err := dir.Check(); err != nil {
		return nil, &UntrustedError{fmt.Sprintf("%v (nothing was sent to the server socket in it)", err)}
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", dir.Socket())
	if err != nil {
		return nil, err
	}
	if err := checkPeer(c.(*net.UnixConn), dir.Socket()); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checkPeer refuses a server that runs as another user. Where the system
// cannot say who the peer is (neither Linux, macOS nor FreeBSD), the
// directory's check is the only fence.
func checkPeer(c *net.UnixConn, sock string) error {
	uid, err := peercred.UID(c)
	if errors.Is(err, peercred.ErrUnsupported) {
		return nil
	}
	if err != nil {
		return &UntrustedError{fmt.Sprintf("cannot tell who runs the server on %s (%v), so nothing was sent to it", sock, err)}
	}
	if me := os.Getuid(); uid != me {
		return &UntrustedError{fmt.Sprintf("the server on %s runs as uid %d, not as you (uid %d): another user's program is answering "+
			"in your state directory, so nothing was sent to it; stop that program, remove %s and start termkeep again", sock, uid, me, sock)}
	}
	return nil
}
