package logind

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"
)

// DefaultBudget is how long the sessions have to get ready for a
// shutdown: well under logind's default InhibitDelayMaxSec (5 s), after
// which logind goes on without us.
const DefaultBudget = 3 * time.Second

// Options configure a watcher.
type Options struct {
	// Prepare readies every running session for a shutdown (shutdown
	// true), or tells each the shutdown is off (false). It returns when
	// all are done or ctx ends, whichever comes first; the watcher never
	// runs two at once.
	Prepare func(ctx context.Context, shutdown bool)
	// Budget bounds each Prepare; 0 is DefaultBudget.
	Budget time.Duration
	// Why is the lock's reason, as `systemd-inhibit --list` shows it.
	Why string
	Log *slog.Logger
}

// Watcher holds the delay lock and runs Options.Prepare when logind
// announces a shutdown (Machine decides; it does the I/O).
type Watcher struct {
	conn    Conn
	opts    Options
	m       *Machine
	ctx     context.Context // ends at Stop: a lock asked for then is not waited for
	cancel  context.CancelFunc
	done    chan struct{} // a Prepare(true) run has returned
	stop    chan struct{}
	exited  chan struct{}
	stopper sync.Once
	// Owned by the watcher's goroutine.
	lock      *os.File
	preparing bool
	warned    bool // a refused lock was logged
}

// Watch starts a watcher on conn, which it owns from now on (Stop closes
// it).
func Watch(conn Conn, opts Options) *Watcher {
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Why == "" {
		opts.Why = "save the state of the terminal sessions"
	}
	w := &Watcher{
		conn: conn, opts: opts, m: NewMachine(opts.Budget),
		done: make(chan struct{}, 1), stop: make(chan struct{}), exited: make(chan struct{}),
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	go w.run()
	return w
}

// Stop ends the watcher: a preparation under way is finished (it is
// bounded by the budget), the lock let go and the connection closed.
func (w *Watcher) Stop() {
	w.stopper.Do(func() {
		close(w.stop)
		w.cancel()
	})
	<-w.exited
}

func (w *Watcher) run() {
	defer close(w.exited)
	shutdowns := w.conn.Shutdowns()
	w.apply(w.m.Start())
	for {
		select {
		case start, ok := <-shutdowns:
			if !ok {
				shutdowns = nil
				w.opts.Log.Warn("lost the system bus: a shutdown is met by the holders' own SIGTERM handling from now on")
				w.apply(w.m.Lost())
				continue
			}
			w.opts.Log.Info("logind: PrepareForShutdown", "shutting_down", start)
			w.apply(w.m.Signal(start, time.Now()))
		case <-w.done:
			w.preparing = false
			w.apply(w.m.Done())
		case <-w.stop:
			if w.preparing {
				<-w.done
				w.preparing = false
			}
			if w.lock != nil {
				w.lock.Close()
				w.lock = nil
			}
			w.conn.Close()
			return
		}
	}
}

// apply does acts in order, and what the machine answers to a lock
// asked for.
func (w *Watcher) apply(acts []Action) {
	for len(acts) > 0 {
		a := acts[0]
		acts = acts[1:]
		switch a.Kind {
		case TakeLock:
			ctx, cancel := context.WithTimeout(w.ctx, callTimeout)
			f, err := w.conn.Inhibit(ctx, "shutdown", "termkeep", w.opts.Why, "delay")
			cancel()
			if err != nil && !w.warned && w.ctx.Err() == nil {
				w.warned = true
				w.opts.Log.Warn("logind gave no delay inhibitor lock: a shutdown is prepared for as far as the time logind gives allows", "err", err)
			}
			if f != nil {
				if w.lock != nil {
					f.Close() // the machine never asks twice; a second lock is no use
				} else {
					w.lock = f
				}
			}
			acts = append(w.m.Locked(err == nil), acts...)
		case ReleaseLock:
			if w.lock != nil {
				w.lock.Close()
				w.lock = nil
				w.opts.Log.Info("released the shutdown inhibitor lock")
			}
		case Prepare:
			w.preparing = true
			deadline := a.Deadline
			go func() {
				ctx, cancel := context.WithDeadline(context.Background(), deadline)
				defer cancel()
				w.opts.Prepare(ctx, true)
				w.done <- struct{}{}
			}()
		case Cancel:
			ctx, cancel := context.WithTimeout(context.Background(), w.opts.Budget)
			w.opts.Prepare(ctx, false)
			cancel()
		}
	}
}

// Start watches logind on the bus at address (SystemBusAddress; ""
// means none) until the returned function is called. Connecting happens
// in the background; without a bus, or when it cannot be reached, it
// logs one line and does nothing more.
func Start(address string, opts Options) (stop func()) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if address == "" {
		log.Info("no system bus: a shutdown is met by the holders' own SIGTERM handling")
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		conn, err := Dial(ctx, address)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("cannot reach the system bus: a shutdown is met by the holders' own SIGTERM handling", "address", address, "err", err)
			}
			return
		}
		w := Watch(conn, opts)
		<-quit
		w.Stop()
	}()
	return func() {
		close(quit)
		// A dial still under way is given up; a watcher stops in order.
		select {
		case <-exited:
		case <-time.After(100 * time.Millisecond):
			cancel()
			<-exited
		}
		cancel()
	}
}
