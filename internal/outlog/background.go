package outlog

import (
	"fmt"
	"sync"
)

// background runs, in order on one goroutine, the file-system work that an
// Append need not wait for under SyncInterval and SyncNever: the fsync and
// close of a finished segment, the periodic fsync of the tail, the fsync of
// the directory after a segment is created, and the removal of segments
// retention dropped. The holder appends from the goroutine that reads the
// pty; keeping fsync and unlink off it keeps the child's output flowing at
// the pty's pace. Under SyncAlways every fsync stays inline.
//
// Jobs run in the order they were queued, so a file's fsync always comes
// before its close. A full queue makes the appender wait: the disk is then
// the bottleneck, and memory stays bounded.
type background struct {
	jobs chan func() error
	done chan struct{}

	mu  sync.Mutex // guards err
	err error      // the first failed job (sticky, surfaced by the next append)
}

func startBackground() *background {
	b := &background{jobs: make(chan func() error, 16), done: make(chan struct{})}
	go b.run()
	return b
}

func (b *background) run() {
	defer close(b.done)
	for job := range b.jobs {
		if err := job(); err != nil {
			b.mu.Lock()
			if b.err == nil {
				b.err = err
			}
			b.mu.Unlock()
		}
	}
}

// do queues job.
func (b *background) do(job func() error) { b.jobs <- job }

// failed returns the first job error, if any.
func (b *background) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// wait returns once every job queued before it has run.
func (b *background) wait() error {
	ch := make(chan struct{})
	b.jobs <- func() error { close(ch); return nil }
	<-ch
	return b.failed()
}

// stop runs what is queued and ends the goroutine.
func (b *background) stop() error {
	close(b.jobs)
	<-b.done
	return b.failed()
}

// finish fsyncs (unless SyncNever) and closes a segment that is no longer
// the tail, in the background when the policy allows.
func (l *Log) finish(f segmentFile, start uint64) error {
	job := func() error {
		defer f.Close()
		if l.opts.Sync == SyncNever {
			return nil
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("outlog: sync segment %s: %w", segName(start), err)
		}
		return nil
	}
	if l.bg == nil || l.opts.Sync == SyncAlways {
		return job()
	}
	l.bg.do(job)
	return nil
}
