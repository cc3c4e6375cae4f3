package attach

import (
	"context"
	"errors"
	"time"

	"golang.org/x/term"
)

// NeedsTerminal is an Opener's error when it can connect only with the
// user's help on the terminal: ssh wanting a password or a passphrase
// that its batch mode may not ask for. attach says Why on the terminal
// and waits for a key (the detach key detaches); then it lends Ask the
// terminal in its normal mode, its own reader stopped, takes it back, and
// connects again, drawing the screen anew over what was written on it.
type NeedsTerminal struct {
	Why string
	// Ask runs with the terminal (ssh asking, then connecting); its error
	// is said with the next wait.
	Ask func(ctx context.Context) error
}

func (e *NeedsTerminal) Error() string { return e.Why }

// errLeft: attach ends, quietly, while it waited to lend the terminal
// (a detach, the terminal's end).
var errLeft = errors.New("attach: left while waiting for a key")

// lend asks for a key, then lends the terminal to nt.Ask, and returns
// Ask's error; failed is the last one. stop ends attach: errLeft without
// a word more.
func (c *attacher) lend(ctx context.Context, nt *NeedsTerminal, failed error) (askErr, stop error) {
	why := nt.Why
	if failed != nil {
		why += " (" + failed.Error() + ")"
	}
	if c.rt == nil || c.cooked == nil {
		// The reader cannot be stopped: it would take what is typed.
		return nil, errors.New(why + ": attach cannot lend this terminal to ssh; start an ssh-agent, or attach again")
	}
	c.lost = true
	asked := time.Now()
	c.paint(func() []byte {
		return []byte("\r\n[termkeep: " + why + ": press a key to type it; Ctrl-\\ detaches]\r\n")
	})
	c.notice("%s: press a key to type it", nt.Why)
	for waiting := true; waiting; {
		select {
		case k, ok := <-c.typed.ch:
			if !ok {
				return nil, errLeft // the terminal hung up
			}
			c.typed.discard()
			waiting = k.at.Before(asked) // typed before the question: not its answer
		case <-c.detached.ch:
			c.farewell = "detached from " + c.cfg.Ref
			return nil, errLeft
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.rt.pause()
	fd := int(c.cfg.In.Fd())
	term.Restore(fd, c.cooked)
	err := nt.Ask(ctx)
	term.MakeRaw(fd)
	c.rt.resume()
	c.res.redraw() // over what Ask wrote
	return err, nil
}
