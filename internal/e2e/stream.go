package e2e

import (
	"context"
	"testing"
	"time"

	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// Stream is a viewer driven by a test. A goroutine reads it all the time,
// as a real viewer does, so it keeps answering the server's pings.
type Stream struct {
	T      *testing.T
	S      *client.Stream
	Frames chan Frame
}

type Frame struct {
	F   wire.Frame
	Err error
}

func OpenViewer(t *testing.T, e *Env, ref string, hello wire.Hello) *Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if hello.Role == "" {
		hello.Role = wire.RoleViewer
	}
	s, err := e.C.Attach(ctx, ref, hello)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	v := &Stream{T: t, S: s, Frames: make(chan Frame, 1<<16)}
	go v.Read()
	return v
}

func (v *Stream) Read() {
	for {
		f, err := v.S.Next()
		if err == nil {
			f.Payload = append([]byte(nil), f.Payload...)
		}
		v.Frames <- Frame{f, err}
		if err != nil {
			return
		}
	}
}

// Until reads frames until fn says stop, within a deadline.
func (v *Stream) Until(what string, fn func(f wire.Frame) bool) {
	v.T.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case fr := <-v.Frames:
			if fr.Err != nil {
				v.T.Fatalf("waiting for %s: %v", what, fr.Err)
			}
			if fn(fr.F) {
				return
			}
		case <-deadline:
			v.S.Close()
			v.T.Fatalf("timed out waiting for %s", what)
		}
	}
}
