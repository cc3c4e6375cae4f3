package client

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"termkeep/internal/statedir"
	"termkeep/internal/wire"
)

// Attach sends its hello with the upgrade request, not a round trip after
// it: the server (handleAttach) reads frames the HTTP server buffered. A
// server here that answers the upgrade only once it has the hello gets it;
// one that refuses the upgrade makes Attach fail with its answer, whatever
// it did with the hello.
func TestAttachSendsHelloWithTheRequest(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		dir := statedir.Dir(t.TempDir())
		if err := dir.Ensure(); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", dir.Socket())
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan wire.Hello, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			if refuse {
				c.Write([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
				return
			}
			var buf []byte
			f, err := wire.ReadFrame(br, &buf) // before the upgrade is answered
			if err != nil || f.Type != wire.TypeHello {
				return
			}
			var h wire.Hello
			wire.ParseJSON(f.Payload, &h)
			got <- h
			c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: termkeep-wire\r\nConnection: Upgrade\r\n\r\n"))
			w := wire.NewWriter(c)
			w.JSON(wire.TypeWelcome, wire.Welcome{Version: wire.Version, Session: "s1"})
			time.Sleep(100 * time.Millisecond)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := New(dir).Attach(ctx, "x", wire.Hello{From: wire.FromSnapshot, Scrollback: 7, ScreenFirst: true})
		cancel()
		ln.Close()
		if refuse {
			if err == nil {
				s.Close()
				t.Error("an upgrade refused: Attach did not fail")
			}
			continue
		}
		if err != nil {
			t.Fatalf("attach: %v", err)
		}
		s.Close()
		h := <-got
		if h.Scrollback != 7 || !h.ScreenFirst || h.Version != wire.Version || h.Role != wire.RoleViewer {
			t.Errorf("the server got the hello %+v", h)
		}
	}
}
