package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// listenerChild runs the child programs of this file's tests in the test
// binary: "fakesock" listens on TK_SOCK as a planted server would and
// copies every byte a client sends it to stdout (after a "listening" line),
// answering each read as a server would, so that a client that trusted it
// would go on to send what it came to send.
func listenerChild(mode string) (int, bool) {
	switch mode {
	case "dial":
		// A client that trusts whatever socket it is given.
		c, err := net.Dial("unix", os.Getenv("TK_SOCK"))
		if err != nil {
			fmt.Println("dial:", err)
			return 1, true
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: termkeep\r\n\r\n")
		b, _ := io.ReadAll(c)
		fmt.Printf("%s", b)
		return 0, true
	case "flood":
		flood(os.Getenv("TK_ADDR"), os.Getenv("TK_CONNS"))
		return 0, true
	case "fakesock":
		os.Remove(os.Getenv("TK_SOCK"))
		ln, err := net.Listen("unix", os.Getenv("TK_SOCK"))
		if err != nil {
			fmt.Println("listen:", err)
			return 1, true
		}
		os.Chmod(os.Getenv("TK_SOCK"), 0o666)
		var mu sync.Mutex
		fmt.Println("listening")
		for {
			c, err := ln.Accept()
			if err != nil {
				return 1, true
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						mu.Lock()
						fmt.Printf("got %q\n", buf[:n])
						mu.Unlock()
						c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"))
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}
	return 0, false
}

// flood holds n connections to the browser listener at addr, without a
// token, of the kinds that held a server's descriptors forever: idle after
// one /healthz, idle after a 401 that left a body to drain, and silent from
// the start. A connection the server closes is opened again half a second
// later, as an attacker would. It prints "ready" once every connection was
// tried, and runs until it is killed.
func flood(addr, conns string) {
	n, _ := strconv.Atoi(conns)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(kind int) {
			first := true
			for {
				c, err := net.Dial("tcp", addr)
				if err == nil {
					switch kind {
					case 0:
						fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
					case 1:
						fmt.Fprintf(c, "POST /api/sessions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"name\":", addr)
					}
				}
				if first {
					first = false
					wg.Done()
				}
				if err == nil {
					io.Copy(io.Discard, c) // until the server closes it
					c.Close()
				}
				time.Sleep(500 * time.Millisecond)
			}
		}(i % 3)
	}
	wg.Wait()
	fmt.Println("ready")
	select {}
}
