package session

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/wire"
)

// A viewer that is gone (detached by attach -d here; revoked or dropped
// the same way) has sent its last byte to the program: once its
// ServeViewer has returned, nothing it sent reaches the pty, however
// fast it was typing as it went.
func TestNothingFromAViewerAfterItIsGone(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.connected()
	holderSide := vh.holder(wire.Version)

	var mu sync.Mutex
	var typed []byte // the input the holder got, in order
	go func() {
		var buf []byte
		for {
			f, err := wire.ReadFrame(holderSide, &buf)
			if err != nil {
				return
			}
			if f.Type == wire.TypeInput {
				mu.Lock()
				typed = append(typed, f.Payload...)
				mu.Unlock()
			}
		}
	}()

	serve := func(hello wire.Hello) *pipeViewer {
		pv := vh.attach(hello, ViewerOptions{})
		go func() { // the viewer reads whatever it is sent
			var buf []byte
			for {
				if _, err := wire.ReadFrame(pv.c, &buf); err != nil {
					return
				}
			}
		}()
		return pv
	}
	const rounds = 50
	for i := range rounds {
		typist := serve(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd})
		go func() {
			w := wire.NewWriter(typist.c)
			for w.Input([]byte(fmt.Sprintf("<%d>", i))) == nil {
			}
		}()
		// Wait until its typing arrives, then detach it from elsewhere.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			mu.Lock()
			arrived := bytes.Contains(typed, []byte(fmt.Sprintf("<%d>", i)))
			mu.Unlock()
			if arrived {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the viewer's typing never arrived", i)
			}
		}
		other := serve(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd, DetachOthers: true})
		select {
		case <-typist.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: the detached viewer was not let go", i)
		}
		if err := vh.h.Input([]byte(fmt.Sprintf("|%d|", i))); err != nil {
			t.Fatal(err)
		}
		typist.c.Close()
		other.c.Close()
		<-other.done
	}
	// Every marker is in, after everything before it.
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		got = bytes.Clone(typed)
		mu.Unlock()
		if bytes.Contains(got, []byte(fmt.Sprintf("|%d|", rounds-1))) {
			break
		}
	}
	for i := range rounds {
		mark := bytes.Index(got, []byte(fmt.Sprintf("|%d|", i)))
		if mark < 0 {
			t.Fatalf("marker %d never reached the holder", i)
		}
		if late := bytes.Index(got[mark:], []byte(fmt.Sprintf("<%d>", i))); late >= 0 {
			t.Fatalf("round %d: the viewer's typing reached the pty %d bytes after it was gone", i, late)
		}
	}
}
